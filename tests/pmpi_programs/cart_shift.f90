! Fortran check of the PMPI library: MPI_CART_CREATE with reorder = .true. and MPI_CART_SHIFT
! on a periodic P0 x P1 grid (usage: cart_shift P0 P1). Every process sends its coordinates to
! its + neighbour in each dimension and checks what its - neighbour sent. Rank 0 prints
! "RESULT errors=E moved=M".
program cart_shift
  use mpi
  implicit none
  integer :: ierr, wrank, wsize, cart, me, d, lo, hi, errors, moved, total(2), mine(2)
  integer :: dims(2), coords(2), got(2), status(MPI_STATUS_SIZE), ndims
  logical :: periods(2)
  character(len=16) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, wrank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, wsize, ierr)
  call get_command_argument(1, arg)
  read (arg, *) dims(1)
  call get_command_argument(2, arg)
  read (arg, *) dims(2)
  periods = .true.
  errors = 0
  moved = 0
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .true., cart, ierr)
  if (ierr /= MPI_SUCCESS) errors = errors + 1
  if (cart /= MPI_COMM_NULL) then
    call MPI_COMM_RANK(cart, me, ierr)
    if (me /= wrank) moved = 1
    call MPI_CARTDIM_GET(cart, ndims, ierr)
    if (ndims /= 2) errors = errors + 1
    call MPI_CART_COORDS(cart, me, 2, coords, ierr)
    if (coords(1) * dims(2) + coords(2) /= me) errors = errors + 1
    do d = 0, 1
      call MPI_CART_SHIFT(cart, d, 1, lo, hi, ierr)
      call MPI_SENDRECV(coords, 2, MPI_INTEGER, hi, 7, got, 2, MPI_INTEGER, lo, 7, cart, &
                        status, ierr)
      if (got(d + 1) /= modulo(coords(d + 1) - 1, dims(d + 1))) then
        errors = errors + 1
        print *, 'rank', wrank, 'dim', d, 'neighbour below says', got
      end if
    end do
    call MPI_COMM_FREE(cart, ierr)
  end if
  mine = (/ errors, moved /)
  call MPI_REDUCE(mine, total, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (wrank == 0) write (*, '(A,I0,A,I0)') 'RESULT errors=', total(1), ' moved=', total(2)
  call MPI_FINALIZE(ierr)
end program cart_shift
