! `use mpi_f08` persistent sends without the optional ierror (modern codes leave it out):
! MPI_Send_init of 6 integers to r+1 and MPI_Recv_init from r-1, started twice with
! MPI_Startall, then freed; the recording counts 2 messages of 24 B per pair.
program persist_f08
  use mpi_f08
  implicit none
  integer :: r, n, it, sb(6), rb(6)
  type(MPI_Request) :: reqs(2)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  sb = r
  call MPI_Send_init(sb, 6, MPI_INTEGER, mod(r + 1, n), 0, MPI_COMM_WORLD, reqs(1))
  call MPI_Recv_init(rb, 6, MPI_INTEGER, mod(r + n - 1, n), 0, MPI_COMM_WORLD, reqs(2))
  do it = 1, 2
     call MPI_Startall(2, reqs)
     call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  end do
  call MPI_Request_free(reqs(1))
  call MPI_Request_free(reqs(2))
  call MPI_Finalize()
end program persist_f08
