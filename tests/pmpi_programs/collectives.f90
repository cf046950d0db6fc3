! Fortran (`use mpi`; compiled with -cpp -DUSE_F08, `use mpi_f08`, whose entry points are
! mpi_send_f08_ in Open MPI and mpi_send_f08ts_ in MPICH) collectives the recording must see
! under Open MPI as under MPICH (whose Fortran layer calls the C MPI_ functions, while Open
! MPI's calls PMPI_ directly), one MPI_PCONTROL phase each, with 4-byte integers on P processes:
!   phase 0: MPI_SEND of 10 integers 0 -> 1 and MPI_ISEND of 5 integers 1 -> 2
!   phase 1: MPI_SCAN of 1 integer          (r -> r+1)
!   phase 2: MPI_IALLREDUCE of 4 integers   (ring: 2(P-1)/P x 16 B to r+1)
!   phase 3: MPI_REDUCE_SCATTER_BLOCK of 1  (4 B to every other process)
!   phase 4: MPI_NEIGHBOR_ALLTOALL of 1 on a periodic ring (4 B to r-1 and r+1)
!   phase 5: MPI_IBCAST of 2 integers from 0 (8 B to every other process)
!   phase 6: MPI_EXSCAN of 1 integer        (r -> r+1)
!   phase 7: MPI_ALLGATHERV of 3 integers   (12 B to every other process)
! (the recording folds phase 6 into phase 1: they have the same rows)
program collectives
#ifdef USE_F08
  use mpi_f08
  implicit none
  integer :: ierr, r, n, i
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  type(MPI_Comm) :: cart
#else
  use mpi
  implicit none
  integer :: ierr, r, n, req, st(MPI_STATUS_SIZE), cart, i
#endif
  integer :: sb(64), rb(64), dims(1), counts(64), displs(64)
  logical :: per(1)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, r, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, n, ierr)
  sb = 1
  if (r == 0) call MPI_SEND(sb, 10, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
  if (r == 1) call MPI_RECV(rb, 10, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, st, ierr)
  if (r == 1) then
     call MPI_ISEND(sb, 5, MPI_INTEGER, 2, 0, MPI_COMM_WORLD, req, ierr)
     call MPI_WAIT(req, st, ierr)
  end if
  if (r == 2) call MPI_RECV(rb, 5, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, st, ierr)
  call MPI_PCONTROL(1)
  call MPI_SCAN(sb, rb, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(1)
  call MPI_IALLREDUCE(sb, rb, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, st, ierr)
  call MPI_PCONTROL(1)
  call MPI_REDUCE_SCATTER_BLOCK(sb, rb, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(1)
  dims(1) = n
  per(1) = .true.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, per, .false., cart, ierr)
  call MPI_NEIGHBOR_ALLTOALL(sb, 1, MPI_INTEGER, rb, 1, MPI_INTEGER, cart, ierr)
  call MPI_PCONTROL(1)
  call MPI_IBCAST(sb, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, st, ierr)
  call MPI_PCONTROL(1)
  call MPI_EXSCAN(sb, rb, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(1)
  do i = 1, n
     counts(i) = 3
     displs(i) = 3 * (i - 1)
  end do
  call MPI_ALLGATHERV(sb, 3, MPI_INTEGER, rb, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_COMM_FREE(cart, ierr)
  call MPI_FINALIZE(ierr)
end program
