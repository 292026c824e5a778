/*
 * spart/distributed.h: work over several processes (MPI ranks), each with
 * its host threads or one CUDA device, giving the one-process result bit
 * for bit.
 *
 * Two ways to split a reconstruction:
 *   - frames: the frames of a multi-frame solve in contiguous blocks, one
 *     block a rank (spart_distributed_partition_frames); each frame's solve
 *     is the one-process solve of that frame (spart_mart_solve_frames
 *     on each block: spart_mart_solve_frames_distributed, below), and the
 *     solutions, or whole results (spart_mart_results_allgather), are
 *     gathered in frame order;
 *   - one operator: the rows of a matrix in contiguous blocks balanced by
 *     entries, not rows (spart_distributed_partition_rows), split from a
 *     matrix every rank has, or brought by each rank (made from its own
 *     weights, loaded, streamed) so that none holds the whole; each rank
 *     keeps its rows and, for the product over a distributed vector,
 *     receives the input entries its columns need from the ranks that own
 *     them.
 *
 * Communicators. spart never calls MPI_Init or MPI_Finalize: the program
 * does (as a PETSc or Trilinos user does), and passes the address of its
 * MPI_Comm to spart_communicator_create, which duplicates it
 * (MPI_Comm_dup), so that spart's messages never meet the program's.
 * Every function taking a communicator is collective: every rank of it
 * calls it, in the same order, with the same sizes.
 *
 * Availability: MPI is optional at build time (CMake SPART_ENABLE_MPI:
 * AUTO, ON or OFF; spart_distributed_has_mpi() says). In a build without
 * MPI, spart_communicator_create answers SPART_ERROR_NOT_IMPLEMENTED with
 * a sentence saying how to build with it, so nothing else here can be
 * reached; the partitions, which need no MPI, work everywhere. NCCL is
 * optional too (SPART_ENABLE_NCCL; spart_distributed_has_nccl()): this
 * version moves device vectors through host buffers and MPI either way
 * (docs/dev/mpi-notes.md says why and what NCCL will replace).
 *
 * Determinism. Nothing here sums across ranks: every value is computed by
 * one rank in the one-process order, and exchanges only move values (all
 * gathers in rank order). A product's rows keep the plan of the whole
 * matrix (its group size g and its rule, spart/regridder.h), so each row's
 * sum is the one-process sum, bit for bit, for any number of ranks, thread
 * count, and on host or device ranks alike. MART over distributed
 * operators (spart_distributed_mart_operators) works on vectors that every
 * rank holds whole (gathered in rank order after each product), so its
 * merits and its scene updates are the one-process ones, computed the same
 * way on every rank: no reduction whose shape could depend on timing.
 *
 * Memory: each rank holds its rows of the operator (the point of the
 * split), the columns its rows need, and whole vectors for MART (images
 * and one scene per channel). Objects own their arrays; a distributed
 * operator borrows its communicator, which must outlive it.
 *
 * Failures: the creates and the frames solve agree on their outcome, so
 * a rank that fails alone (memory, a device) makes every rank fail with a
 * sentence naming it. The products do not (an agreement would cost every
 * product a round trip): a product that fails on one rank only, which
 * takes a device fault, leaves the others waiting in its gather; such a
 * program ends with MPI_Abort, as MPI programs do.
 *
 * Thread safety: one collective at a time per communicator (MPI's own
 * rule); the program's MPI must be initialised with at least
 * MPI_THREAD_FUNNELED when spart's calls come from one thread.
 */
#ifndef SPART_DISTRIBUTED_H
#define SPART_DISTRIBUTED_H

#include "spart/common.h"
#include "spart/mart.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build of spart has MPI, else 0. */
SPART_API int spart_distributed_has_mpi(void);

/* 1 when this build of spart found NCCL, else 0. */
SPART_API int spart_distributed_has_nccl(void);

/* ---- partitions (no MPI needed) --------------------------------------------------- */

/* The frames of rank r of num_ranks: [first_frame[r], first_frame[r + 1]),
 * first_frame[r] = floor(r * num_frames / num_ranks): contiguous blocks
 * whose sizes differ by at most one, in rank order. first_frame holds
 * num_ranks + 1 values. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (num_frames < 0, num_ranks < 1). */
SPART_NODISCARD SPART_API spart_status spart_distributed_partition_frames(spart_context *context,
                                                                          int64_t num_frames,
                                                                          int num_ranks,
                                                                          int64_t *first_frame);

/* The rows of rank r of num_ranks: [first_row[r], first_row[r + 1]),
 * balanced by entries: first_row[r] (0 < r < num_ranks) is the first row
 * at or after the previous boundary whose row_ptr reaches
 * ceil(r * num_entries / num_ranks), so every rank gets about num_entries
 * / num_ranks entries (a rank may get none when one row holds more than
 * a share); a matrix without entries is split by rows. row_ptr: num_rows
 * + 1 nondecreasing values from 0, in host memory. first_row holds
 * num_ranks + 1 values. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (num_rows < 0, num_ranks < 1, row pointers
 * that do not start at 0 or decrease: the first bad one is named). */
SPART_NODISCARD SPART_API spart_status spart_distributed_partition_rows(spart_context *context,
                                                                        const int64_t *row_ptr,
                                                                        int64_t num_rows,
                                                                        int num_ranks,
                                                                        int64_t *first_row);

/* ---- communicators -------------------------------------------------------------- */

typedef struct spart_communicator spart_communicator;

/* A communicator over the ranks of `mpi_comm`: the address of an MPI_Comm
 * of the MPI spart was built with (NULL: MPI_COMM_WORLD), which spart
 * duplicates. Collective. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_NOT_IMPLEMENTED (a build without MPI),
 * SPART_ERROR_INVALID_ARGUMENT (MPI not initialised, or already
 * finalised), SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL (an MPI call
 * failed: its error string is in the sentence). */
SPART_NODISCARD SPART_API spart_status spart_communicator_create(spart_context *context,
                                                                 const void *mpi_comm,
                                                                 spart_communicator **communicator);

/* Free a communicator (MPI_Comm_free of the duplicate; collective, before
 * MPI_Finalize). Accepts NULL. */
SPART_API void spart_communicator_free(spart_communicator *communicator);

/* This process's rank, and the number of ranks (0 and 1 for NULL). */
SPART_API int spart_communicator_rank(const spart_communicator *communicator);
SPART_API int spart_communicator_size(const spart_communicator *communicator);

/* Gather every rank's `count` doubles (counts may differ between ranks)
 * into `gathered` on every rank, in rank order: rank 0's values, then
 * rank 1's, ... gathered holds the sum of the counts, host memory.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (count <
 * 0), SPART_ERROR_NOT_IMPLEMENTED (a rank's count of 2^31 or more),
 * SPART_ERROR_INTERNAL (MPI). */
SPART_NODISCARD SPART_API spart_status
spart_distributed_allgather(spart_context *context, const spart_communicator *communicator,
                            const double *values, int64_t count, double *gathered);

/* ---- one operator over the ranks ---------------------------------------------------- */

typedef struct spart_distributed_operator spart_distributed_operator;

/* Split `whole` (a host regridder without batch axes: num_rows x
 * num_columns values out and in, every rank passing the same matrix,
 * built or loaded there) by spart_distributed_partition_rows: this rank
 * keeps a copy of its rows, with the plan of `whole` (its group size and
 * rule, so the sums are whole's), its columns renumbered to the columns
 * its rows use, in ascending order. The caller may free `whole` after.
 * on_device nonzero: the rows go to the context's CUDA device, and the
 * products take and give device memory there. Collective (the ranks
 * compare the matrices' sizes, entry counts and plans, not their values:
 * equal values are the caller's to keep). Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_NOT_IMPLEMENTED (a regridder with
 * batch axes, or on a device: copy it to the host first), SPART_ERROR_
 * SHAPE_MISMATCH (ranks passed matrices of different sizes or plans),
 * SPART_ERROR_NO_DEVICE, SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL
 * (MPI, or another rank failed: the ranks agree on the outcome, so all
 * fail together and none waits in a later collective). */
SPART_NODISCARD SPART_API spart_status spart_distributed_operator_create(
    spart_context *context, const spart_communicator *communicator, const spart_regridder *whole,
    int on_device, spart_distributed_operator **distributed);

/* The order of a whole matrix's sums, for operators whose ranks never
 * hold it whole (spart/regridder.h and spart/csr_matrix.h, Determinism). */
typedef enum spart_distributed_plan {
    /* one g for every row from the whole matrix's mean row length: the
     * order of a regridder made from weights of the whole matrix */
    SPART_DISTRIBUTED_PLAN_MEAN = 0,
    /* each row its own g from its own length: the order of a CSR matrix */
    SPART_DISTRIBUTED_PLAN_BY_ROW = 1
} spart_distributed_plan;

/* An operator whose rows each rank brings itself, so that no rank ever
 * holds the whole matrix: `rows` (a host regridder without batch axes, of
 * the whole matrix's columns) holds this rank's rows, the blocks of the
 * ranks one after another in rank order (rank 0's rows first; any sizes,
 * balanced or not, a rank may bring none). The sums keep the whole
 * matrix's order, `plan` (its g from the total rows and entries, which
 * the ranks gather), so the products are those of the whole matrix bit
 * for bit, as for spart_distributed_operator_create. The caller may free
 * `rows` after. Collective. Errors: those of
 * spart_distributed_operator_create, SPART_ERROR_SHAPE_MISMATCH (blocks
 * of different column counts), SPART_ERROR_UNKNOWN_ENUM (plan). */
SPART_NODISCARD SPART_API spart_status spart_distributed_operator_create_from_rows(
    spart_context *context, const spart_communicator *communicator, const spart_regridder *rows,
    spart_distributed_plan plan, int on_device, spart_distributed_operator **distributed);

/* Free a distributed operator (not collective). Accepts NULL. */
SPART_API void spart_distributed_operator_free(spart_distributed_operator *distributed);

/* The whole matrix's sizes, and this rank's share: its first row, rows,
 * entries, and the columns its rows use (0 for NULL). */
SPART_API int64_t spart_distributed_operator_num_rows(const spart_distributed_operator *d);
SPART_API int64_t spart_distributed_operator_num_columns(const spart_distributed_operator *d);
SPART_API int64_t spart_distributed_operator_first_row(const spart_distributed_operator *d);
SPART_API int64_t spart_distributed_operator_local_rows(const spart_distributed_operator *d);
SPART_API int64_t spart_distributed_operator_local_entries(const spart_distributed_operator *d);
SPART_API int64_t spart_distributed_operator_local_columns(const spart_distributed_operator *d);

/* y = A x with x and y whole on every rank: x holds num_columns values
 * (the same on every rank), y receives num_rows values: each rank forms
 * its rows from the x entries they use, and the rows are gathered in rank
 * order. Host memory, or device memory of the context's device for an
 * operator made with on_device (device vectors pass through host buffers
 * for the gather). Collective. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (x and y overlap; device or host memory
 * where the other is needed), SPART_ERROR_OUT_OF_MEMORY,
 * SPART_ERROR_INTERNAL (MPI, CUDA). */
SPART_NODISCARD SPART_API spart_status spart_distributed_operator_apply(
    spart_context *context, spart_distributed_operator *distributed, const double *x, double *y);

/* The input partition of spart_distributed_operator_multiply: rank r owns
 * columns [first_column[r], first_column[r + 1]) of x, the even split
 * floor(r * num_columns / num_ranks). first_column holds num_ranks + 1
 * values. Errors: SPART_ERROR_NULL_POINTER. */
SPART_NODISCARD SPART_API spart_status spart_distributed_operator_column_partition(
    spart_context *context, const spart_distributed_operator *distributed, int64_t *first_column);

/* y = A x with x and y distributed: x_local holds this rank's columns
 * (spart_distributed_operator_column_partition), y_local receives this
 * rank's rows (first_row .. first_row + local_rows). The ranks exchange the
 * x entries each needs (one MPI_Alltoallv, lists fixed when the operator
 * was made), then each forms its rows: the same bits as the rows of the
 * one-process product. Host memory, or device memory of the context's
 * device for an operator made with on_device (the exchanged entries pass
 * through host buffers). Collective. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL (MPI, CUDA). */
SPART_NODISCARD SPART_API spart_status
spart_distributed_operator_multiply(spart_context *context, spart_distributed_operator *distributed,
                                    const double *x_local, double *y_local);

/* ---- MART over distributed operators ------------------------------------------------- */

/* The two operators of spart_mart_regridder_pair, each split over the
 * same communicator (made by spart_distributed_operator_create from the
 * pair's forward and backward regridders, both on the host or both on
 * the device). */
typedef struct spart_distributed_mart_pair {
    spart_distributed_operator *forward;
    spart_distributed_operator *backward;
    int64_t num_channel;
    double gain;       /* > 0 */
    double read_noise; /* >= 0 */
} spart_distributed_mart_pair;

/* Fill `operators` (spart/mart.h) to run spart_mart_solve on every rank
 * at once over the distributed pair (which must outlive them): the
 * forward callback is spart_distributed_operator_apply of the forward
 * operator then spart_mart_finish_prediction (the widths of
 * spart_mart_operators_from_regridders), the backward one the apply of
 * the backward operator. Every rank calls spart_mart_solve with the same
 * observations and options and gets the same result, equal bit for bit
 * to the one-process solve with spart_mart_operators_from_regridders.
 * The operators are not capturable (each product waits for MPI).
 * Errors: those of spart_mart_operators_from_regridders, and
 * SPART_ERROR_INVALID_ARGUMENT (one operator on a device and the other
 * not). */
SPART_NODISCARD SPART_API spart_status
spart_distributed_mart_operators(spart_context *context, const spart_distributed_mart_pair *pair,
                                 spart_mart_operators *operators);

/* ---- frames over the ranks (the solver layer) ------------------------------------------ */

/* spart_mart_solve_frames over the ranks: num_frames frames of
 * observations (frame f: num_channel x image_size values at observed + f *
 * num_channel * image_size, host or device memory as operators->on_device
 * says; every rank passes all frames, or at least its own) with the same
 * operators and options, rank r solving the frames of
 * spart_distributed_partition_frames with spart_mart_solve_frames
 * (batch_frames as there), so that each frame's result is, bit for bit,
 * spart_mart_solve of that frame alone, as in one process. On return
 * results[f] (num_frames pointers) is this rank's result for each of its
 * frames and NULL for the others' (free them with spart_mart_result_free);
 * when `solutions` is not NULL it receives every frame's solution
 * (num_frames x scene_size, host memory) on every rank, gathered in frame
 * order, and `iterations` (num_frames values, or NULL) every frame's
 * number of iterations. Options as spart_mart_solve_frames: a guess holds
 * num_frames x scene_size values; a callback is called by the rank that
 * solves the frame, told the frame's number in the whole sequence.
 * Collective. Errors: those of spart_mart_solve_frames on the rank that
 * failed; on every other rank SPART_ERROR_INTERNAL naming that rank (all
 * ranks fail together, none waits); SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (num_frames < 1). On failure every
 * results[f] is NULL. */
SPART_NODISCARD SPART_API spart_status spart_mart_solve_frames_distributed(
    spart_context *context, const spart_communicator *communicator,
    const spart_mart_operators *operators, int64_t num_frames, const double *observed,
    const spart_mart_options *options, int64_t batch_frames, spart_mart_result **results,
    double *solutions, int64_t *iterations);

/* Every frame's result on every rank, after
 * spart_mart_solve_frames_distributed (each rank holding the results of
 * its own block of frames): results[f] of the other ranks' frames become
 * copies of theirs (the same solutions, kept states, merits, correlations,
 * iterations, success, message and gamma, bit for bit; free them as
 * usual), gathered in frame order. Collective. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (num_frames < 1;
 * a rank without a result of its own frames: every rank fails),
 * SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL (MPI). */
SPART_NODISCARD SPART_API spart_status
spart_mart_results_allgather(spart_context *context, const spart_communicator *communicator,
                             int64_t num_frames, spart_mart_result **results);

#ifdef __cplusplus
}
#endif

#endif /* SPART_DISTRIBUTED_H */
