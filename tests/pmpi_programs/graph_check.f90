! Fortran check of the PMPI library's graph wrappers, reorder = .true. (usage: graph_check KIND)
!   graph       MPI_GRAPH_CREATE: ring with chords to v+-3 on the first P-1 processes
!   adjacent    MPI_DIST_GRAPH_CREATE_ADJACENT: vertex v sends to v+1 and v+3 (weights 10v+1,
!               10v+2) and lists its sources v-3, v-1 in that order with their weights
!   unweighted  the same with MPI_UNWEIGHTED (the Fortran sentinel)
!   dist        MPI_DIST_GRAPH_CREATE: process r gives the out-edges of vertex r+1
! Every process checks, for the vertex it plays (its rank in the new communicator), the
! topology queries (neighbour lists and weights in the order given) and that the neighbours
! agree: MPI_NEIGHBOR_ALLGATHER of the ranks and MPI_NEIGHBOR_ALLTOALL of tagged values deliver
! exactly what the lists say. Rank 0 prints "RESULT errors=E moved=M null=N ranks=r0,r1,...".
program graph_check
  use mpi
  implicit none
  integer :: ierr, wrank, wsize, comm, me, errors, moved, isnull, n, k, j, topo
  integer :: mine(3), total(3), v, deg
  integer, allocatable :: all(:), index(:), edges(:), gi(:), ge(:)
  integer :: nb(4), want(4), got(4), cnt, nn, ne
  integer :: s(2), sw(2), d(2), dw(2), gs(2), gsw(2), gd(2), gdw(2), ws(2), wsw(2)
  integer :: wd(2), wdw(2), nin, nout, sendv(2), recvv(2), ranks_in(2), vv(1), degs(1)
  logical :: weighted, found
  character(len=16) :: kind
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, wrank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, wsize, ierr)
  call get_command_argument(1, kind)
  errors = 0
  comm = MPI_COMM_NULL

  if (kind == 'graph') then
    n = wsize - 1
    allocate (index(n), edges(4 * n), gi(n), ge(4 * n))
    do v = 0, n - 1
      index(v + 1) = 4 * (v + 1)
      call ring_lists(v, n, edges(4 * v + 1:4 * v + 4))
    end do
    call MPI_GRAPH_CREATE(MPI_COMM_WORLD, n, index, edges, .true., comm, ierr)
    if (ierr /= MPI_SUCCESS) errors = errors + 1
    if (comm /= MPI_COMM_NULL) then
      call MPI_COMM_RANK(comm, me, ierr)
      call MPI_TOPO_TEST(comm, topo, ierr)
      if (topo /= MPI_GRAPH) call fail('MPI_TOPO_TEST is not MPI_GRAPH')
      call MPI_GRAPHDIMS_GET(comm, nn, ne, ierr)
      if (nn /= n .or. ne /= 4 * n) call fail('MPI_GRAPHDIMS_GET')
      call MPI_GRAPH_GET(comm, n, 4 * n, gi, ge, ierr)
      if (any(gi /= index) .or. any(ge /= edges)) call fail('MPI_GRAPH_GET differs')
      call MPI_GRAPH_NEIGHBORS_COUNT(comm, me, cnt, ierr)
      if (cnt /= 4) call fail('MPI_GRAPH_NEIGHBORS_COUNT')
      call MPI_GRAPH_NEIGHBORS(comm, me, 4, nb, ierr)
      call ring_lists(me, n, want)
      if (any(nb /= want)) call fail('MPI_GRAPH_NEIGHBORS')
      ! neighbours agree: the k-th block comes from nb(k) and names it
      call MPI_NEIGHBOR_ALLGATHER(me, 1, MPI_INTEGER, got, 1, MPI_INTEGER, comm, ierr)
      if (any(got /= nb)) call fail('MPI_NEIGHBOR_ALLGATHER on the graph')
    end if
  else if (kind == 'adjacent' .or. kind == 'unweighted' .or. kind == 'dist') then
    n = wsize
    if (kind == 'dist') then
      vv(1) = modulo(wrank + 1, n)
      degs(1) = 2
      call out_lists(vv(1), n, d, dw)
      call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, vv, degs, d, dw, MPI_INFO_NULL, .true., &
                                 comm, ierr)
    else
      call out_lists(wrank, n, d, dw)
      call in_lists(wrank, n, s, sw)
      if (kind == 'adjacent') then
        call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, s, sw, 2, d, dw, MPI_INFO_NULL, &
                                            .true., comm, ierr)
      else
        call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, s, MPI_UNWEIGHTED, 2, d, &
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, .true., comm, ierr)
      end if
    end if
    if (ierr /= MPI_SUCCESS) errors = errors + 1
    call MPI_COMM_RANK(comm, me, ierr)
    call MPI_TOPO_TEST(comm, topo, ierr)
    if (topo /= MPI_DIST_GRAPH) call fail('MPI_TOPO_TEST is not MPI_DIST_GRAPH')
    call MPI_DIST_GRAPH_NEIGHBORS_COUNT(comm, nin, nout, weighted, ierr)
    if (nin /= 2 .or. nout /= 2) call fail('MPI_DIST_GRAPH_NEIGHBORS_COUNT degrees')
    if (weighted .neqv. (kind /= 'unweighted')) call fail('MPI_DIST_GRAPH_NEIGHBORS_COUNT weighted')
    gsw = -1
    gdw = -1
    if (kind == 'unweighted') then
      call MPI_DIST_GRAPH_NEIGHBORS(comm, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED, ierr)
    else
      call MPI_DIST_GRAPH_NEIGHBORS(comm, 2, gs, gsw, 2, gd, gdw, ierr)
    end if
    call out_lists(me, n, wd, wdw)
    call in_lists(me, n, ws, wsw)
    if (kind == 'dist') then
      ! the order is the library's: compare as sets of (neighbour, weight)
      do k = 1, 2
        found = .false.
        do j = 1, 2
          found = found .or. (gd(j) == wd(k) .and. gdw(j) == wdw(k))
        end do
        if (.not. found) call fail('MPI_DIST_GRAPH_NEIGHBORS misses a destination')
        found = .false.
        do j = 1, 2
          found = found .or. (gs(j) == ws(k) .and. gsw(j) == wsw(k))
        end do
        if (.not. found) call fail('MPI_DIST_GRAPH_NEIGHBORS misses a source')
      end do
    else
      if (any(gs /= ws) .or. any(gd /= wd)) call fail('neighbour lists not in the order given')
      if (kind == 'adjacent' .and. (any(gsw /= wsw) .or. any(gdw /= wdw))) &
        call fail('weights not in the order given')
    end if
    ! neighbours agree: block j comes from source gs(j) and names it
    call MPI_NEIGHBOR_ALLGATHER(me, 1, MPI_INTEGER, ranks_in, 1, MPI_INTEGER, comm, ierr)
    if (any(ranks_in /= gs)) call fail('MPI_NEIGHBOR_ALLGATHER')
    ! block k to destination gd(k) carries (me, gd(k)): each receiver checks it was meant for it
    do k = 1, 2
      sendv(k) = 1000 * me + gd(k)
    end do
    call MPI_NEIGHBOR_ALLTOALL(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, comm, ierr)
    do j = 1, 2
      if (recvv(j) /= 1000 * gs(j) + me) call fail('MPI_NEIGHBOR_ALLTOALL')
    end do
  else
    call fail('unknown kind ' // trim(kind))
  end if

  me = -1
  if (comm /= MPI_COMM_NULL) call MPI_COMM_RANK(comm, me, ierr)
  moved = 0
  if (comm /= MPI_COMM_NULL .and. me /= wrank) moved = 1
  isnull = 0
  if (comm == MPI_COMM_NULL) isnull = 1
  mine = (/ errors, moved, isnull /)
  call MPI_REDUCE(mine, total, 3, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  allocate (all(wsize))
  call MPI_GATHER(me, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (wrank == 0) then
    write (*, '(A,I0,A,I0,A,I0,A)', advance='no') 'RESULT errors=', total(1), ' moved=', &
      total(2), ' null=', total(3), ' ranks='
    do k = 1, wsize
      if (k > 1) write (*, '(A)', advance='no') ','
      write (*, '(I0)', advance='no') all(k)
    end do
    write (*, '(A)') ''
  end if
  if (comm /= MPI_COMM_NULL) call MPI_COMM_FREE(comm, ierr)
  call MPI_FINALIZE(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    errors = errors + 1
    write (0, '(A,I0,A,A)') 'graph_check: process ', wrank, ': ', what
  end subroutine fail

  subroutine ring_lists(v, n, nb)  ! neighbours of vertex v of the n-vertex ring with chords
    integer, intent(in) :: v, n
    integer, intent(out) :: nb(4)
    nb = (/ modulo(v + 1, n), modulo(v - 1, n), modulo(v + 3, n), modulo(v - 3, n) /)
  end subroutine ring_lists

  subroutine out_lists(v, n, d, w)
    integer, intent(in) :: v, n
    integer, intent(out) :: d(2), w(2)
    d = (/ modulo(v + 1, n), modulo(v + 3, n) /)
    w = (/ 10 * v + 1, 10 * v + 2 /)
  end subroutine out_lists

  subroutine in_lists(v, n, s, w)  ! sources in a fixed order, with the weights they give
    integer, intent(in) :: v, n
    integer, intent(out) :: s(2), w(2)
    s = (/ modulo(v - 3, n), modulo(v - 1, n) /)
    w = (/ 10 * s(1) + 2, 10 * s(2) + 1 /)
  end subroutine in_lists

end program graph_check
