"""
Write the C source of spart's Python binding, spart._spart, with cffi in
API mode (python/CMakeLists.txt runs this at build time, then compiles the
file it writes against libspart).

    python build_cffi.py OUTPUT.c

CDEF below declares the part of spart's C API the package calls, copied
from include/spart/*.h. In API mode cffi does not trust these lines: the
generated C calls the real functions through the real headers, so a
declaration that disagrees with a header (a type, a field, an enum value)
is a compile error, not a crash at run time. Keep the order of the headers.

The structs the library fills with defaults (those with an `_init`
function), and those it fills or reports itself (spart_mart_operators,
spart_mart_progress), end with `...;`: cffi then takes their size and
layout from the real header, so a field added to the C struct keeps its
default from Python until the package learns of it, instead of breaking
the binding; the fields named here are still checked against the header.
"""

import sys

import cffi

CDEF = r"""
/* ---- spart/common.h ---- */
#define SPART_MAX_NDIM 16
typedef enum spart_status {
    SPART_OK = 0,
    SPART_ERROR_NULL_POINTER = 1,
    SPART_ERROR_INVALID_ARGUMENT = 2,
    SPART_ERROR_SHAPE_MISMATCH = 3,
    SPART_ERROR_AXIS_OUT_OF_RANGE = 4,
    SPART_ERROR_NOT_FINITE = 5,
    SPART_ERROR_OUT_OF_BOUNDS = 6,
    SPART_ERROR_UNKNOWN_ENUM = 7,
    SPART_ERROR_OUT_OF_MEMORY = 8,
    SPART_ERROR_OVERFLOW = 9,
    SPART_ERROR_IO = 10,
    SPART_ERROR_FILE_FORMAT = 11,
    SPART_ERROR_NO_DEVICE = 12,
    SPART_ERROR_NOT_IMPLEMENTED = 13,
    SPART_ERROR_INTERNAL = 14
} spart_status;
const char *spart_status_string(spart_status status);
const char *spart_version(void);
int spart_version_number(void);
typedef struct spart_context spart_context;
spart_status spart_context_create(spart_context **context);
void spart_context_free(spart_context *context);
const char *spart_context_error(const spart_context *context);
const char *spart_last_error(void);
spart_status spart_context_set_threads(spart_context *context, int threads);
int spart_context_threads(const spart_context *context);
typedef struct spart_shape {
    int ndim;
    int64_t dims[SPART_MAX_NDIM];
} spart_shape;
typedef struct spart_array {
    const double *data;
    spart_shape shape;
} spart_array;

/* ---- spart/weights.h ---- */
typedef enum spart_method {
    SPART_METHOD_MULTILINEAR = 0, SPART_METHOD_CONSERVATIVE = 1
} spart_method;
typedef enum spart_bounds {
    SPART_BOUNDS_EXTRAPOLATE = 0, SPART_BOUNDS_NAN = 1, SPART_BOUNDS_ERROR = 2
} spart_bounds;
typedef enum spart_perturb {
    SPART_PERTURB_DEFAULT = 0, SPART_PERTURB_NO = 1, SPART_PERTURB_YES = 2
} spart_perturb;
typedef enum spart_algorithm {
    SPART_ALGORITHM_AUTO = 0, SPART_ALGORITHM_SWEEP = 1, SPART_ALGORITHM_CLIP = 2
} spart_algorithm;
typedef struct spart_weights_options {
    spart_method method;
    spart_bounds bounds;
    spart_perturb perturb;
    uint64_t seed;
    spart_algorithm algorithm;
    int coalesce;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    const spart_array *weights_input;
    ...; /* later fields: the _init function's defaults */
} spart_weights_options;
void spart_weights_options_init(spart_weights_options *options);
typedef struct spart_weights spart_weights;
spart_status spart_weights_build(spart_context *context, int num_coordinates,
                                 const spart_array *coordinates_input,
                                 const spart_array *coordinates_output,
                                 const spart_weights_options *options, spart_weights **weights);
spart_status spart_weights_create_from_arrays(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, const int64_t *indices_input,
    const int64_t *indices_output, const double *values, spart_weights **weights);
void spart_weights_axes(const spart_weights *weights, int *num_axis_input, int *axis_input,
                        int *num_axis_output, int *axis_output);
void spart_weights_free(spart_weights *weights);
spart_shape spart_weights_shape_orthogonal(const spart_weights *weights);
spart_shape spart_weights_shape_input(const spart_weights *weights);
spart_shape spart_weights_shape_output(const spart_weights *weights);
int64_t spart_weights_num_elements(const spart_weights *weights);
int64_t spart_weights_num_entries(const spart_weights *weights);
spart_status spart_weights_arrays(const spart_weights *weights, const int64_t **offsets,
                                  const int64_t **indices_input, const int64_t **indices_output,
                                  const double **values);
spart_status spart_weights_scale(spart_context *context, spart_weights *weights,
                                 const spart_array *factor_input, const spart_array *factor_output);
spart_status spart_weights_transpose(spart_context *context, const spart_weights *weights,
                                     spart_weights **transposed);
spart_status spart_weights_convolve(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel, spart_weights **convolved);
spart_status spart_weights_transpose_conservative(
    spart_context *context, const spart_weights *weights, int num_coordinates,
    const spart_array *coordinates_input, const spart_array *coordinates_output,
    const spart_weights_options *options, spart_weights **transposed);
spart_status spart_regrid_from_weights_shape(
    spart_context *context, const spart_weights *weights, const spart_shape *shape_values_input,
    int num_axis_input, const int *axis_input, int num_axis_output, const int *axis_output,
    spart_shape *shape_values_output);
spart_status spart_regrid_from_weights(
    spart_context *context, const spart_weights *weights, const spart_array *values_input,
    int num_axis_input, const int *axis_input, int num_axis_output, const int *axis_output,
    double *values_output, int64_t size_output);
spart_status spart_regrid_shape(spart_context *context, int num_coordinates,
                                const spart_array *coordinates_input,
                                const spart_array *coordinates_output,
                                const spart_shape *shape_values_input,
                                const spart_weights_options *options,
                                spart_shape *shape_values_output);
spart_status spart_regrid(spart_context *context, int num_coordinates,
                          const spart_array *coordinates_input,
                          const spart_array *coordinates_output, const spart_array *values_input,
                          const spart_weights_options *options, double *values_output,
                          int64_t size_output);
spart_status spart_weights_save(spart_context *context, const spart_weights *weights,
                                const char *path, int overwrite);
spart_status spart_weights_load(spart_context *context, const char *path, spart_weights **weights);
spart_status spart_weights_build_device(
    spart_context *context, int num_coordinates, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_weights_options *options,
    spart_weights **weights);
spart_status spart_weights_build_device_workspace_size(
    spart_context *context, int num_coordinates, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_weights_options *options, size_t *bytes);
int spart_weights_cuda_device(const spart_weights *weights);
spart_status spart_weights_to_host(spart_context *context, const spart_weights *weights,
                                   spart_weights **host);

/* ---- spart/regridder.h ---- */
typedef enum spart_value_type { SPART_FLOAT64 = 0, SPART_FLOAT32 = 1 } spart_value_type;
typedef struct spart_regridder_options {
    int has_shape_input;
    spart_shape shape_input;
    int has_shape_output;
    spart_shape shape_output;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    spart_value_type value_type;
    int drop_zeros;
    ...; /* later fields: the _init function's defaults */
} spart_regridder_options;
void spart_regridder_options_init(spart_regridder_options *options);
typedef struct spart_regridder spart_regridder;
spart_status spart_regridder_create(spart_context *context, const spart_weights *weights,
                                    const spart_regridder_options *options,
                                    spart_regridder **regridder);
void spart_regridder_free(spart_regridder *regridder);
spart_shape spart_regridder_shape_input(const spart_regridder *regridder);
spart_shape spart_regridder_shape_output(const spart_regridder *regridder);
int64_t spart_regridder_num_rows(const spart_regridder *regridder);
int64_t spart_regridder_num_columns(const spart_regridder *regridder);
int64_t spart_regridder_num_entries(const spart_regridder *regridder);
spart_value_type spart_regridder_value_type(const spart_regridder *regridder);
int spart_regridder_group_size(const spart_regridder *regridder);
spart_status spart_regridder_csr(const spart_regridder *regridder, const int64_t **row_ptr,
                                 const int32_t **columns32, const int64_t **columns64,
                                 const void **values);
spart_status spart_regridder_apply_shape(spart_context *context, const spart_regridder *regridder,
                                         const spart_shape *shape_x, spart_shape *shape_y);
spart_status spart_regridder_apply(spart_context *context, const spart_regridder *regridder,
                                   const spart_array *x, double *y, int64_t size_y);
spart_status spart_regridder_transpose_conservative(
    spart_context *context, spart_regridder *regridder, int num_coordinates,
    const spart_array *coordinates_input, const spart_array *coordinates_output,
    const spart_weights_options *options, spart_regridder **transposed);
spart_status spart_regridder_transpose(spart_context *context, spart_regridder *regridder,
                                       spart_regridder **transposed);
spart_status spart_regridder_save(spart_context *context, const spart_regridder *regridder,
                                  const char *path, int overwrite);
spart_status spart_regridder_load(spart_context *context, const char *path,
                                  spart_regridder **regridder);
typedef struct spart_weights_block {
    int64_t first_element;
    int64_t num_elements;
    const int64_t *offsets;
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
} spart_weights_block;
typedef spart_status (*spart_weights_block_function)(void *user_data, int64_t block, int pass,
                                                     spart_weights_block *result);
typedef struct spart_weights_stream {
    spart_shape shape_orthogonal;
    spart_shape shape_input;
    spart_shape shape_output;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t num_blocks;
    int64_t max_block_entries;
    int blocks_on_device;
    spart_weights_block_function function;
    void *user_data;
    ...; /* later fields: the _init function's defaults */
} spart_weights_stream;
void spart_weights_stream_init(spart_weights_stream *stream);
typedef struct spart_stream_report {
    size_t budget_bytes;
    size_t peak_bytes;
    size_t result_bytes;
    size_t staging_bytes;
    int64_t num_blocks;
    int64_t num_entries_read;
    int64_t num_entries;
    ...; /* fields the package does not read */
} spart_stream_report;
spart_status spart_regridder_stream_bytes(
    spart_context *context, const spart_weights_stream *stream,
    const spart_regridder_options *options, int on_device, int64_t num_entries, size_t *bytes);
spart_status spart_regridder_stream_block_entries(
    spart_context *context, const spart_weights_stream *stream,
    const spart_regridder_options *options, int on_device, int64_t num_entries,
    size_t budget_bytes, int64_t *block_entries);
spart_status spart_regridder_create_streamed(
    spart_context *context, const spart_weights_stream *stream,
    const spart_regridder_options *options, int on_device, size_t budget_bytes,
    spart_regridder **regridder, spart_stream_report *report);
typedef struct spart_weights_files spart_weights_files;
spart_status spart_weights_files_open(
    spart_context *context, int num_files, const char *const *paths, int64_t block_entries,
    spart_weights_files **files, spart_weights_stream *stream);
void spart_weights_files_close(spart_weights_files *files);

/* ---- spart/device.h ---- */
spart_status spart_context_set_cuda_device(spart_context *context, int device);
spart_status spart_context_set_cuda_stream(spart_context *context, void *stream);
spart_status spart_regridder_create_device(spart_context *context, const spart_weights *weights,
                                           const spart_regridder_options *options,
                                           spart_regridder **regridder);
spart_status spart_regridder_to_device(spart_context *context, const spart_regridder *regridder,
                                       spart_regridder **device);
spart_status spart_regridder_to_host(spart_context *context, const spart_regridder *regridder,
                                     spart_regridder **host);
int spart_regridder_cuda_device(const spart_regridder *regridder);

/* ---- spart/csr_matrix.h ---- */
typedef enum spart_index_type { SPART_INT64 = 0, SPART_INT32 = 1 } spart_index_type;
typedef struct spart_csr_arrays {
    int64_t num_rows;
    int64_t num_columns;
    int64_t num_entries;
    const void *row_ptr;
    spart_index_type row_ptr_type;
    const void *columns;
    spart_index_type column_type;
    const void *values;
    spart_value_type value_type;
    int on_device;
} spart_csr_arrays;
typedef struct spart_csr_matrix_options {
    int wrap;
    int check;
    ...; /* later fields: the _init function's defaults */
} spart_csr_matrix_options;
void spart_csr_matrix_options_init(spart_csr_matrix_options *options);
typedef struct spart_csr_matrix spart_csr_matrix;
spart_status spart_csr_matrix_create(spart_context *context, const spart_csr_arrays *arrays,
                                     const spart_csr_matrix_options *options,
                                     spart_csr_matrix **matrix);
void spart_csr_matrix_free(spart_csr_matrix *matrix);
int64_t spart_csr_matrix_num_rows(const spart_csr_matrix *matrix);
int64_t spart_csr_matrix_num_columns(const spart_csr_matrix *matrix);
int64_t spart_csr_matrix_num_entries(const spart_csr_matrix *matrix);
spart_status spart_csr_matrix_arrays(const spart_csr_matrix *matrix, const int64_t **row_ptr,
                                     const int32_t **columns32, const int64_t **columns64,
                                     const void **values);
typedef enum spart_operation {
    SPART_OPERATION_NONE = 0, SPART_OPERATION_TRANSPOSE = 1
} spart_operation;
typedef struct spart_csr_product {
    spart_operation operation;
    int64_t num_vectors;
    double alpha;
    double beta;
    spart_value_type vector_type;
    ...; /* later fields: the _init function's defaults */
} spart_csr_product;
void spart_csr_product_init(spart_csr_product *product);
spart_status spart_csr_matrix_multiply(spart_context *context, spart_csr_matrix *matrix,
                                       const spart_csr_product *product, const void *x,
                                       void *y);

/* ---- spart/softmax.h ---- */
typedef struct spart_softmax_segments {
    int64_t num_rows;
    int64_t num_edges;
    int64_t num_heads;
    const int64_t *row_ptr;
    const int32_t *row_ptr32;
    spart_value_type value_type;
    int on_device;
} spart_softmax_segments;
typedef struct spart_softmax_gather {
    int64_t num_nodes;
    int64_t width;
    const int64_t *columns;
    const int32_t *columns32;
} spart_softmax_gather;
spart_status spart_softmax_forward(spart_context *context, const spart_softmax_segments *segments,
                                   const void *scores, void *out);
spart_status spart_softmax_backward(spart_context *context,
                                    const spart_softmax_segments *segments, const void *out,
                                    const void *grad_out, void *grad_scores);
spart_status spart_softmax_aggregate(spart_context *context,
                                     const spart_softmax_segments *segments,
                                     const spart_softmax_gather *gather, const void *scores,
                                     const void *features, void *aggregated, void *out);

/* ---- spart/scoring.h ---- */
typedef enum spart_similarity {
    SPART_SIMILARITY_DOT = 0, SPART_SIMILARITY_COSINE = 1
} spart_similarity;
spart_status spart_scoring_apply_batch(spart_context *context, const void *query,
                                       const void *candidates, void *probabilities, void *logits,
                                       int64_t num_question, int64_t num_candidate,
                                       int64_t dimension, spart_similarity similarity,
                                       double scale, double temperature,
                                       spart_value_type value_type, int on_device);

/* ---- spart/vcs.h ---- */
typedef struct spart_vcs spart_vcs;
typedef enum spart_vcs_recipe {
    SPART_VCS_RAW = 0, SPART_VCS_CP10K_LOG1P = 1, SPART_VCS_PARAFAC2 = 2, SPART_VCS_SCANPY = 3,
    SPART_VCS_PEARSON = 4
} spart_vcs_recipe;
typedef enum spart_vcs_format { SPART_VCS_VCSR = 0, SPART_VCS_VCSC = 1 } spart_vcs_format;
typedef enum spart_vcs_direction {
    SPART_VCS_A_TIMES_B = 0, SPART_VCS_B_TIMES_A = 1
} spart_vcs_direction;
spart_status spart_vcs_create_from_csr(spart_context *context, int64_t n_rows, int64_t n_cols,
                                       const int64_t *row_ptr, const int64_t *col_idx,
                                       const double *values, spart_vcs_recipe recipe,
                                       spart_vcs_format format, spart_vcs **vcs);
void spart_vcs_free(spart_vcs *vcs);
spart_status spart_vcs_shape(const spart_vcs *vcs, int64_t *n_rows, int64_t *n_cols,
                             int64_t *nnz, int64_t *n_runs);
int spart_vcs_is_transposed(const spart_vcs *vcs);
int spart_vcs_on_device(const spart_vcs *vcs);
spart_status spart_vcs_transpose(spart_context *context, const spart_vcs *vcs, spart_vcs **view);
spart_status spart_vcs_to_csr(spart_context *context, const spart_vcs *vcs, int64_t *row_ptr,
                              int64_t *col_idx, double *values, double *delta);
spart_status spart_vcs_statistics(spart_context *context, const spart_vcs *vcs,
                                  double *row_scale, double *gene_scale, double *centre,
                                  double *scale);
spart_status spart_vcs_to_device(spart_context *context, const spart_vcs *vcs, int both_groupings,
                                 spart_vcs **device, int64_t *device_bytes);
spart_status spart_vcs_multiply(spart_context *context, const spart_vcs *vcs,
                                spart_vcs_direction direction, int64_t width, const double *b,
                                double *out);
spart_status spart_vcs_multiply_float(spart_context *context, const spart_vcs *vcs,
                                      spart_vcs_direction direction, int64_t width,
                                      const float *b, float *out);

/* ---- spart/permute.h ---- */
typedef enum spart_permute_type {
    SPART_PERMUTE_FLOAT32 = 0, SPART_PERMUTE_FLOAT64 = 1, SPART_PERMUTE_COMPLEX64 = 2,
    SPART_PERMUTE_COMPLEX128 = 3
} spart_permute_type;
typedef enum spart_permute_op {
    SPART_PERMUTE_IDENTITY = 0, SPART_PERMUTE_CONJUGATE = 1
} spart_permute_op;
typedef struct spart_permute_block {
    const int64_t *sizes;
    int64_t num_destination;
    int64_t num_source;
    const double *recoupling;
    const int64_t *destination_offsets;
    const int64_t *destination_strides;
    const int64_t *source_offsets;
    const int64_t *source_strides;
} spart_permute_block;
typedef struct spart_permute_plan spart_permute_plan;
spart_status spart_permute_plan_create(spart_context *context, spart_permute_type type,
                                       int num_axes, const int *permutation, spart_permute_op op,
                                       int64_t num_blocks, const spart_permute_block *blocks,
                                       int64_t source_length, int64_t destination_length,
                                       int on_device, spart_permute_plan **plan);
void spart_permute_plan_free(spart_permute_plan *plan);
spart_status spart_permute_execute(spart_context *context, const spart_permute_plan *plan,
                                   const void *alpha, const void *source, const void *beta,
                                   void *destination);
spart_status spart_permute_plan_counts(const spart_permute_plan *plan, int64_t *num_items,
                                       int64_t *num_tiles, int64_t *tile_bytes);

/* ---- spart/mart.h ---- */
typedef struct spart_mart_operators {
    int64_t num_channel;
    int64_t scene_size;
    int64_t image_size;
    spart_status (*forward)(void *user, spart_context *context, const double *scene,
                            double *images, double *widths);
    spart_status (*backward)(void *user, spart_context *context, const double *images,
                             double *scenes);
    void *user;
    int on_device;
    int capturable;
    ...; /* fields the package does not set (left zero): their defaults */
} spart_mart_operators;
typedef struct spart_mart_regridder_pair {
    const spart_regridder *forward;
    const spart_regridder *backward;
    int64_t num_channel;
    double gain;
    double read_noise;
} spart_mart_regridder_pair;
spart_status spart_mart_operators_from_regridders(spart_context *context,
                                                  const spart_mart_regridder_pair *pair,
                                                  spart_mart_operators *operators);
typedef enum spart_mart_stop_rule {
    SPART_MART_STOP_THRESHOLD = 0, SPART_MART_STOP_TARGET = 1, SPART_MART_STOP_COUNT = 2
} spart_mart_stop_rule;
typedef struct spart_mart_progress {
    int64_t iteration;
    int64_t num_channel;
    const double *mean_chi_squared;
    const double *correlation;
    double merit;
    double elapsed_seconds;
    ...; /* fields the package does not read */
} spart_mart_progress;
typedef int (*spart_mart_callback)(void *user, const spart_mart_progress *progress);
typedef struct spart_mart_options {
    double gamma;
    spart_mart_stop_rule stop_rule;
    double threshold;
    double target;
    int64_t max_iterations;
    int keep_intermediate;
    const double *guess;
    spart_mart_callback callback;
    void *callback_user;
    ...; /* later fields: the _init function's defaults */
} spart_mart_options;
void spart_mart_options_init(spart_mart_options *options);
typedef struct spart_mart_result spart_mart_result;
spart_status spart_mart_solve(spart_context *context, const spart_mart_operators *operators,
                              const double *observed, const spart_mart_options *options,
                              spart_mart_result **result);
spart_status spart_mart_solve_frames(spart_context *context,
                                     const spart_mart_operators *operators, int64_t num_frames,
                                     const double *observed, const spart_mart_options *options,
                                     int64_t batch_frames, spart_mart_result **results);
spart_status spart_mart_frames_workspace_size(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const spart_mart_options *options, int64_t batch_frames, size_t *bytes);
spart_status spart_mart_solve_frames_workspace(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const double *observed, const spart_mart_options *options, int64_t batch_frames,
    void *workspace, size_t workspace_bytes, spart_mart_result **results);
void spart_mart_result_free(spart_mart_result *result);
int64_t spart_mart_result_num_iterations(const spart_mart_result *result);
int spart_mart_result_success(const spart_mart_result *result);
const char *spart_mart_result_message(const spart_mart_result *result);
double spart_mart_result_gamma(const spart_mart_result *result);
int64_t spart_mart_result_num_channel(const spart_mart_result *result);
int64_t spart_mart_result_scene_size(const spart_mart_result *result);
const double *spart_mart_result_solution(const spart_mart_result *result);
int64_t spart_mart_result_num_solutions(const spart_mart_result *result);
const double *spart_mart_result_solutions(const spart_mart_result *result, int64_t k);
const double *spart_mart_result_mean_chi_squared(const spart_mart_result *result);
const double *spart_mart_result_correlation(const spart_mart_result *result);

/* ---- spart/psf.h ---- */
spart_status spart_psf_gaussian(spart_context *context, double sigma_major, double sigma_minor,
                                double angle, const int64_t size[2], double *kernel,
                                int64_t size_kernel);

/* ---- spart/instrument.h ---- */
typedef enum spart_psf_mode {
    SPART_PSF_AUTO = 0, SPART_PSF_FFT = 1, SPART_PSF_FOLDED = 2
} spart_psf_mode;
typedef struct spart_instrument_line {
    int64_t num_wavelength;
    const double *wavelength;
    double intensity_scale;
} spart_instrument_line;
typedef struct spart_instrument_params {
    int64_t num_channel;
    const double *angle;
    double dispersion;
    double plate_scale;
    double wavelength_ref;
    double position_ref[2];
    double area_effective;
    double exposure_time;
    double quantum_yield;
    double read_noise;
    int64_t num_wavelength;
    const double *wavelength;
    int64_t num_scene_x;
    const double *scene_x;
    int64_t num_scene_y;
    const double *scene_y;
    int64_t num_sensor_x;
    const double *sensor_x;
    int64_t num_sensor_y;
    const double *sensor_y;
    int solid_angle_steradian;
    spart_value_type value_type;
    int keep_weights;
    const double *psf;
    int64_t psf_size[2];
    spart_psf_mode psf_mode;
    int64_t num_line;
    const spart_instrument_line *lines;
    size_t memory_budget;
    int on_device;
    ...; /* later fields: the _init function's defaults */
} spart_instrument_params;
void spart_instrument_params_init(spart_instrument_params *params);
typedef struct spart_instrument spart_instrument;
spart_status spart_instrument_create(spart_context *context, const spart_instrument_params *params,
                                     spart_instrument **instrument);
void spart_instrument_free(spart_instrument *instrument);
int64_t spart_instrument_num_channel(const spart_instrument *instrument);
int64_t spart_instrument_scene_size(const spart_instrument *instrument);
int64_t spart_instrument_image_size(const spart_instrument *instrument);
int64_t spart_instrument_num_wavelength(const spart_instrument *instrument);
int64_t spart_instrument_num_line(const spart_instrument *instrument);
const spart_regridder *spart_instrument_forward(const spart_instrument *instrument);
const spart_regridder *spart_instrument_backward(const spart_instrument *instrument);
const spart_weights *spart_instrument_weights(const spart_instrument *instrument);
const double *spart_instrument_photons_per_radiance(const spart_instrument *instrument);
spart_status spart_instrument_image(spart_context *context, const spart_instrument *instrument,
                                    const double *scene, double *images, double *widths);
spart_status spart_instrument_backproject(spart_context *context,
                                          const spart_instrument *instrument,
                                          const double *images, double *scenes);
spart_status spart_instrument_observe(spart_context *context, const spart_instrument *instrument,
                                      const double *scene, uint64_t seed, double *images,
                                      double *widths);
spart_status spart_instrument_mart_operators(spart_context *context,
                                             const spart_instrument *instrument,
                                             spart_mart_regridder_pair *pair,
                                             spart_mart_operators *operators);

/* ---- spart/scene.h ---- */
typedef struct spart_scene_gaussians_options {
    double width_velocity;
    double width_x;
    double width_y;
    ...; /* later fields: the _init function's defaults */
} spart_scene_gaussians_options;
void spart_scene_gaussians_options_init(spart_scene_gaussians_options *options);
spart_status spart_wavelength_from_velocity(spart_context *context, double wavelength_rest,
                                            int64_t count, const double *velocity,
                                            double *wavelength);
spart_status spart_scene_gaussians(spart_context *context, double wavelength_rest,
                                   int64_t num_wavelength, const double *velocity, int64_t num_x,
                                   const double *x, int64_t num_y, const double *y,
                                   const spart_scene_gaussians_options *options,
                                   double *wavelength, double *scene);

/* MART's progress callback, written in Python (spart/_mart.py). */
extern "Python" int spart_python_mart_progress(void *user, const spart_mart_progress *progress);

/* A streamed assembly's block function, written in Python (spart/_stream.py). */
extern "Python" spart_status spart_python_weights_block(void *user, int64_t block, int pass,
                                                       spart_weights_block *result);

/* The product with x given as its data and a shape made once (below). */
spart_status spart_python_regridder_apply(spart_context *context,
                                          const spart_regridder *regridder, const double *x,
                                          const spart_shape *shape_x, double *y, int64_t size_y);
/* For python/benchmarks/bench_python.py: `repeat` products timed in C. */
spart_status spart_python_time_apply(spart_context *context, const spart_regridder *regridder,
                                     const double *x, const spart_shape *shape_x, double *y,
                                     int64_t size_y, int64_t repeat, double seconds[2]);
/* For python/benchmarks/bench_loop.py: the clocks spart_python_time_apply reads. */
void spart_python_clock(double seconds[2]);
"""

SOURCE = r"""
#include "spart/common.h"
#include "spart/weights.h"
#include "spart/regridder.h"
#include "spart/device.h"
#include "spart/csr_matrix.h"
#include "spart/softmax.h"
#include "spart/scoring.h"
#include "spart/vcs.h"
#include "spart/permute.h"
#include "spart/mart.h"
#include "spart/psf.h"
#include "spart/instrument.h"
#include "spart/scene.h"

/* The product as Regridder.__call__ makes it: x's shape is made once per
 * shape of x and kept by the Regridder (read-only, so threads may share
 * it); only the data pointers change from call to call. This saves the
 * Python side from filling a spart_array for every call (about a
 * microsecond of its overhead). */
static spart_status spart_python_regridder_apply(spart_context *context,
                                                 const spart_regridder *regridder,
                                                 const double *x, const spart_shape *shape_x,
                                                 double *y, int64_t size_y)
{
    spart_array array;
    array.data = x;
    array.shape = *shape_x;
    return spart_regridder_apply(context, regridder, &array, y, size_y);
}

/* For python/benchmarks/bench_python.py: the time of `repeat` calls of
 * spart_regridder_apply made from C, no Python between them, the loop a
 * call from Python is measured against: seconds[0] wall clock
 * (CLOCK_MONOTONIC), seconds[1] the calling thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID, all of the work with one OpenMP thread). */
#include <time.h>
static double spart_python_seconds(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}
static void spart_python_clock(double seconds[2])
{
    seconds[0] = spart_python_seconds(CLOCK_MONOTONIC);
    seconds[1] = spart_python_seconds(CLOCK_THREAD_CPUTIME_ID);
}
static spart_status spart_python_time_apply(spart_context *context,
                                            const spart_regridder *regridder, const double *x,
                                            const spart_shape *shape_x, double *y,
                                            int64_t size_y, int64_t repeat, double seconds[2])
{
    spart_array array;
    array.data = x;
    array.shape = *shape_x;
    double wall = spart_python_seconds(CLOCK_MONOTONIC);
    double cpu = spart_python_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t k = 0; k < repeat; k++) {
        spart_status status = spart_regridder_apply(context, regridder, &array, y, size_y);
        if (status != SPART_OK)
            return status;
    }
    seconds[0] = spart_python_seconds(CLOCK_MONOTONIC) - wall;
    seconds[1] = spart_python_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
    return SPART_OK;
}
"""


def make_ffi():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("spart._spart", SOURCE)
    return ffi


def main(argv):
    if len(argv) != 2:
        print("usage: python build_cffi.py OUTPUT.c", file=sys.stderr)
        return 2
    make_ffi().emit_c_code(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
