! `use mpi_f08`: MPI_Cart_create of a 1-D periodic ring with reorder = .true., without the
! optional ierror. Prints "RESULT errors=0 ranks=..." from rank 0: the new rank of every
! process in world-rank order.
program cart_f08
  use mpi_f08
  implicit none
  integer :: r, n, nr, dims(1)
  integer, allocatable :: all(:)
  logical :: per(1)
  type(MPI_Comm) :: cart
  character(len=4096) :: line
  integer :: i, pos
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  dims(1) = n
  per(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, .true., cart)
  call MPI_Comm_rank(cart, nr)
  allocate(all(n))
  call MPI_Gather(nr, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (r == 0) then
     line = ''
     pos = 1
     do i = 1, n
        if (i > 1) then
           line(pos:pos) = ','
           pos = pos + 1
        end if
        write(line(pos:), '(I0)') all(i)
        pos = len_trim(line) + 1
     end do
     print '(A,A)', 'RESULT errors=0 ranks=', trim(line)
  end if
  call MPI_Finalize()
end program
