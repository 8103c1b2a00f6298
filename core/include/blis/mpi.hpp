// The MPI mode of an MPI build (-DBLIS_WITH_MPI=ON; docs/distributed.md),
// used by the command line's main(); not built otherwise.
#pragma once

namespace blis {

// Initialises MPI and returns this process's rank; rank 0 of several gets
// the MPI farm for its simulations.
int mpi_start(int* argc, char*** argv);
// A worker rank's loop: simulates what rank 0 sends until it says stop.
void mpi_worker();
// Rank 0 tells the workers to stop; every rank finalises MPI.
void mpi_finish(int rank);

}  // namespace blis
