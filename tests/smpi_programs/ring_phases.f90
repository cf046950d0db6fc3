! A Fortran program for `rankmap validate -- PROGRAM`: MPI_Pcontrol(1), then every process
! sends N doubles to the next (MPI_Sendrecv around the ring), ITERS times. The SMPI build
! links `rankmap simgrid shim`'s file (SimGrid 3.32 aborts on MPI_Pcontrol).
!
! usage: ring_phases N ITERS
program ring_phases
  use mpi
  implicit none
  integer :: ierr, rank, size, n, iters, it
  character(len=32) :: arg
  double precision, allocatable :: a(:), b(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call get_command_argument(1, arg)
  read (arg, *) n
  call get_command_argument(2, arg)
  read (arg, *) iters
  allocate (a(n), b(n))
  a = rank
  do it = 1, iters
    call MPI_Pcontrol(1)
    call MPI_Sendrecv(a, n, MPI_DOUBLE_PRECISION, mod(rank + 1, size), 7, &
                      b, n, MPI_DOUBLE_PRECISION, mod(rank + size - 1, size), 7, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end do
  deallocate (a, b)
  call MPI_Finalize(ierr)
end program ring_phases
