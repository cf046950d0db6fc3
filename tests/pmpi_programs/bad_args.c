/* Topology calls with reorder = 1 and an invalid argument, each a mode of this program: the
 * PMPI library must leave them to the MPI library's own call, untouched.
 *
 * bad_args nullout: under MPI_ERRORS_RETURN, MPI_Cart_create (2x2), MPI_Dist_graph_create_adjacent
 *   and MPI_Dist_graph_create (rings over every process) with a NULL output pointer (not
 *   MPI_Graph_create: Open MPI 4.1's own crashes on it). Every process prints "RESULT rank=R
 *   cart=C adjacent=A dist=D" (C, A, D: the error class returned, 0 for success).
 * bad_args negweight: under MPI_ERRORS_RETURN, MPI_Dist_graph_create_adjacent of a ring with a
 *   negative source weight (the destination weights are valid); prints "RESULT rank=R rc=C
 *   newrank=N" (N: the rank in the new communicator, -1 without one).
 * bad_args freed: MPI_Cart_create (errors fatal) on a communicator already freed: the MPI
 *   library aborts, naming its own function.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int error_class(int rc)
{
    int cls = 0;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "nullout") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int dims[2] = {2, 2}, periods[2] = {1, 1};
        int cart = error_class(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, NULL));
        int src = (rank + size - 1) % size, dst = (rank + 1) % size, one = 1, w = 3;
        int adj = error_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &w, 1,
                                                             &dst, &w, MPI_INFO_NULL, 1,
                                                             NULL));
        int dist = error_class(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &dst, &w,
                                                     MPI_INFO_NULL, 1, NULL));
        printf("RESULT rank=%d cart=%d adjacent=%d dist=%d\n", rank, cart, adj, dist);
    } else if (strcmp(mode, "negweight") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int src = (rank + size - 1) % size, dst = (rank + 1) % size, sw = -5, dw = 5;
        MPI_Comm g = MPI_COMM_NULL;
        int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw,
                                                MPI_INFO_NULL, 1, &g);
        int newrank = -1;
        if (rc == MPI_SUCCESS && g != MPI_COMM_NULL) {
            MPI_Comm_rank(g, &newrank);
            MPI_Comm_free(&g);
        }
        printf("RESULT rank=%d rc=%d newrank=%d\n", rank, error_class(rc), newrank);
    } else if (strcmp(mode, "freed") == 0) {
        MPI_Comm dup, kept;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        kept = dup;
        MPI_Comm_free(&dup);
        int dims[1] = {size}, periods[1] = {1};
        MPI_Comm cart;
        MPI_Cart_create(kept, 1, dims, periods, 1, &cart);
        printf("RESULT rank=%d the freed communicator was accepted\n", rank);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
