! `use mpi_f08` MPI_ALLTOALLV with MPI_IN_PLACE: the send counts (999) are ignored, each
! process sends 2 integers (8 B) to every other; MPICH's mpi_f08 passes the buffer as a C
! descriptor, Open MPI's as an address.
program inplace_f08
  use mpi_f08
  implicit none
  integer :: r, n, i, b(64), sc(8), sd(8), rc(8), rd(8)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  do i = 1, n
     sc(i) = 999
     sd(i) = 0
     rc(i) = 2
     rd(i) = 2 * (i - 1)
  end do
  b = r
  call MPI_Alltoallv(MPI_IN_PLACE, sc, sd, MPI_INTEGER, b, rc, rd, MPI_INTEGER, MPI_COMM_WORLD)
  call MPI_Finalize()
end program inplace_f08
