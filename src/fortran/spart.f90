! spart.f90: the Fortran interface of spart (module spart), through
! ISO_C_BINDING. Free-form Fortran 2008; any Fortran 2008 compiler builds it
! (spart installs this source beside the C headers, as FFTW ships fftw3.f03)
! and links it against the C library (-lspart). spart also installs the
! module compiled by the compiler it was built with, with its library
! (-lspart_fortran, CMake target spart::fortran).
!
! What is here: bind(C) interfaces to the C API (private, named c_<C name>)
! and thin wrappers (public, named as the C functions) that take Fortran
! arrays of assumed shape, turn the C defaults into optional arguments and
! return the C status as an integer (SPART_OK = 0). The error sentence of
! the last failing call is spart_context_error(context). Every public C
! function meant for Fortran has its interface here;
! tests/fortran/check_interfaces.py fails when one is missing and lists the
! functions left out on purpose, with the reason.
!
! Arrays: Fortran stores arrays column-major (first index fastest), C
! row-major (last index fastest). The same memory is therefore the same
! array with its axes in reverse order: a Fortran array a(nx, ny) is the C
! array a[ny][nx], and a Fortran a(n1, n2, n3) is C's a[n3][n2][n1]. spart
! never copies or transposes your arrays; the wrappers pass their shapes
! reversed, and return shapes in Fortran order. So:
!   - shapes (arguments and results of these wrappers) are in Fortran order:
!     the regridder that takes C values [ny][nx] has shape_input (nx, ny);
!   - a C flat index k (0-based, as in weights' indices_input and
!     indices_output, and element numbers) is the Fortran linear index k + 1
!     of the same array (the position in memory, first index fastest);
!   - axis numbers are C's (NumPy's), unchanged. A negative axis counts from
!     the end of the C shape, which is the start of the Fortran one: C axis
!     -d is Fortran dimension d (axis -1 is the first, fastest dimension).
!     Prefer negative axes from Fortran; they read as dimensions;
!   - error sentences come from C and write shapes in C order: a Fortran
!     array x(4, 3) appears as "3x4".
!
! Memory: handles (spart_context, spart_weights, spart_regridder,
! spart_psf, spart_instrument, spart_mart_result) hold a C pointer; free each with its
! _free routine (which accepts a null handle and nulls it). An intent(out)
! handle is nulled when a routine starts: free it before reusing it, or it
! leaks. Products read and write your arrays in place, without copies
! (non-contiguous array sections are copied in and out by the compiler).
! Grids and factors are passed as type(spart_array), which holds a copy of
! a Fortran array and its shape: make them with spart_array_of(a).
! Pointers returned into an object (spart_weights_arrays,
! spart_regridder_csr, spart_mart_result_solution, ...) are valid until the
! object is freed; do not write through them.
!
! Thread safety and determinism: as the C library (spart/common.h): one
! context per thread; the wrappers keep no state of their own.
module spart
    use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_double, c_f_pointer, &
                                           c_float, c_funloc, c_funptr, c_int, c_int32_t, &
                                           c_int64_t, c_loc, c_null_char, c_null_funptr, &
                                           c_null_ptr, c_ptr, c_size_t
    implicit none
    private

    ! ---- constants (spart/common.h, weights.h, regridder.h, mart.h) -------------------------
    integer(c_int), parameter, public :: SPART_OK = 0
    integer(c_int), parameter, public :: SPART_ERROR_NULL_POINTER = 1
    integer(c_int), parameter, public :: SPART_ERROR_INVALID_ARGUMENT = 2
    integer(c_int), parameter, public :: SPART_ERROR_SHAPE_MISMATCH = 3
    integer(c_int), parameter, public :: SPART_ERROR_AXIS_OUT_OF_RANGE = 4
    integer(c_int), parameter, public :: SPART_ERROR_NOT_FINITE = 5
    integer(c_int), parameter, public :: SPART_ERROR_OUT_OF_BOUNDS = 6
    integer(c_int), parameter, public :: SPART_ERROR_UNKNOWN_ENUM = 7
    integer(c_int), parameter, public :: SPART_ERROR_OUT_OF_MEMORY = 8
    integer(c_int), parameter, public :: SPART_ERROR_OVERFLOW = 9
    integer(c_int), parameter, public :: SPART_ERROR_IO = 10
    integer(c_int), parameter, public :: SPART_ERROR_FILE_FORMAT = 11
    integer(c_int), parameter, public :: SPART_ERROR_NO_DEVICE = 12
    integer(c_int), parameter, public :: SPART_ERROR_NOT_IMPLEMENTED = 13
    integer(c_int), parameter, public :: SPART_ERROR_INTERNAL = 14

    integer(c_int), parameter, public :: SPART_MAX_NDIM = 16
    integer(c_int), parameter, public :: SPART_CHUNK_LENGTH = 4096

    integer(c_int), parameter, public :: SPART_METHOD_MULTILINEAR = 0
    integer(c_int), parameter, public :: SPART_METHOD_CONSERVATIVE = 1
    integer(c_int), parameter, public :: SPART_BOUNDS_EXTRAPOLATE = 0
    integer(c_int), parameter, public :: SPART_BOUNDS_NAN = 1
    integer(c_int), parameter, public :: SPART_BOUNDS_ERROR = 2
    integer(c_int), parameter, public :: SPART_PERTURB_DEFAULT = 0
    integer(c_int), parameter, public :: SPART_PERTURB_NO = 1
    integer(c_int), parameter, public :: SPART_PERTURB_YES = 2
    integer(c_int), parameter, public :: SPART_ALGORITHM_AUTO = 0
    integer(c_int), parameter, public :: SPART_ALGORITHM_SWEEP = 1
    integer(c_int), parameter, public :: SPART_ALGORITHM_CLIP = 2

    integer(c_int), parameter, public :: SPART_FLOAT64 = 0
    integer(c_int), parameter, public :: SPART_FLOAT32 = 1

    integer(c_int), parameter, public :: SPART_MART_STOP_THRESHOLD = 0
    integer(c_int), parameter, public :: SPART_MART_STOP_TARGET = 1
    integer(c_int), parameter, public :: SPART_MART_STOP_COUNT = 2

    integer(c_int), parameter, public :: SPART_PSF_AUTO = 0
    integer(c_int), parameter, public :: SPART_PSF_FFT = 1
    integer(c_int), parameter, public :: SPART_PSF_FOLDED = 2

    ! ---- handles ---------------------------------------------------------------------------
    ! Each holds the C object's address (public, so that a callback can wrap
    ! the context it receives: type(spart_context) :: ctx; ctx%handle = context).
    type, public :: spart_context
        type(c_ptr) :: handle = c_null_ptr
    end type spart_context

    type, public :: spart_weights
        type(c_ptr) :: handle = c_null_ptr
    end type spart_weights

    ! owned = .false. for the operators an instrument hands out: freeing
    ! such a handle only nulls it (the instrument frees them).
    type, public :: spart_regridder
        type(c_ptr) :: handle = c_null_ptr
        logical :: owned = .true.
    end type spart_regridder

    type, public :: spart_instrument
        type(c_ptr) :: handle = c_null_ptr
    end type spart_instrument

    ! owned = .false. for the PSF an instrument hands out
    ! (spart_instrument_psf): freeing such a handle only nulls it.
    type, public :: spart_psf
        type(c_ptr) :: handle = c_null_ptr
        logical :: owned = .true.
    end type spart_psf

    type, public :: spart_mart_result
        type(c_ptr) :: handle = c_null_ptr
    end type spart_mart_result

    ! A copy of a Fortran array of any rank with its shape (Fortran order),
    ! as the C library's spart_array describes one: grids (one array per
    ! coordinate) and factors that broadcast. Make one with spart_array_of.
    type, public :: spart_array
        real(c_double), allocatable :: values(:)
        integer(c_int64_t), allocatable :: dims(:)
    end type spart_array

    ! ---- types shared with C (bind(C), the same layout as the C structs) ------------------
    ! MART operators (spart/mart.h). Fill one with
    ! spart_mart_operators_from_regridders or spart_instrument_mart_operators,
    ! or with your own bind(C) functions: forward = c_funloc(f) for f of
    ! interface spart_mart_forward_function, backward likewise, user = any
    ! pointer your functions need.
    type, bind(C), public :: spart_mart_operators
        integer(c_int64_t) :: num_channel
        integer(c_int64_t) :: scene_size
        integer(c_int64_t) :: image_size
        type(c_funptr) :: forward
        type(c_funptr) :: backward
        type(c_ptr) :: user
        ! Nonzero: the callbacks take and give memory of the context's CUDA
        ! device (spart/mart.h). 0 for Fortran callbacks on host arrays.
        integer(c_int) :: on_device
        ! Nonzero: the callbacks only enqueue device work, so the driver may
        ! record an iteration as a CUDA graph. 0 for Fortran callbacks.
        integer(c_int) :: capturable
    end type spart_mart_operators

    ! The storage spart_mart_operators_from_regridders points the operators
    ! at: declare it with the TARGET attribute and keep it while the
    ! operators are used. forward and backward are regridder handles
    ! (regridder%handle).
    type, bind(C), public :: spart_mart_regridder_pair
        type(c_ptr) :: forward
        type(c_ptr) :: backward
        integer(c_int64_t) :: num_channel
        real(c_double) :: gain
        real(c_double) :: read_noise
    end type spart_mart_regridder_pair

    ! The same with a PSF composed by FFT between the two
    ! (spart_mart_operators_from_regridders_psf): psf is a PSF handle
    ! (psf%handle) whose image shape is the forward regridder's output shape.
    type, bind(C), public :: spart_mart_regridder_psf
        type(c_ptr) :: forward
        type(c_ptr) :: psf
        type(c_ptr) :: backward
        integer(c_int64_t) :: num_channel
        real(c_double) :: gain
        real(c_double) :: read_noise
        ! Device regridders and PSF only (spart/psf.h): the backward
        ! operator's image set in device memory; null on the host.
        type(c_ptr) :: device_scratch = c_null_ptr
    end type spart_mart_regridder_psf

    ! What a MART progress callback receives (spart/mart.h): the arrays hold
    ! num_channel values (c_f_pointer them), valid during the call only.
    type, bind(C), public :: spart_mart_progress
        integer(c_int64_t) :: iteration
        integer(c_int64_t) :: num_channel
        type(c_ptr) :: mean_chi_squared
        type(c_ptr) :: correlation
        real(c_double) :: merit
        real(c_double) :: elapsed_seconds
    end type spart_mart_progress

    ! The C structs the wrappers fill (private: the wrappers take their
    ! fields as optional arguments).
    type, bind(C) :: shape_c
        integer(c_int) :: ndim
        integer(c_int64_t) :: dims(SPART_MAX_NDIM)
    end type shape_c

    type, bind(C) :: array_c
        type(c_ptr) :: data
        type(shape_c) :: shape
    end type array_c

    type, bind(C) :: weights_options_c
        integer(c_int) :: method
        integer(c_int) :: bounds
        integer(c_int) :: perturb
        integer(c_int64_t) :: seed ! uint64_t in C
        integer(c_int) :: algorithm
        integer(c_int) :: coalesce
        integer(c_int) :: num_axis_input
        integer(c_int) :: axis_input(SPART_MAX_NDIM)
        integer(c_int) :: num_axis_output
        integer(c_int) :: axis_output(SPART_MAX_NDIM)
        type(c_ptr) :: weights_input
    end type weights_options_c

    type, bind(C) :: regridder_options_c
        integer(c_int) :: has_shape_input
        type(shape_c) :: shape_input
        integer(c_int) :: has_shape_output
        type(shape_c) :: shape_output
        integer(c_int) :: num_axis_input
        integer(c_int) :: axis_input(SPART_MAX_NDIM)
        integer(c_int) :: num_axis_output
        integer(c_int) :: axis_output(SPART_MAX_NDIM)
        integer(c_int) :: value_type
        integer(c_int) :: drop_zeros
    end type regridder_options_c

    type, bind(C) :: mart_options_c
        real(c_double) :: gamma
        integer(c_int) :: stop_rule
        real(c_double) :: threshold
        real(c_double) :: target
        integer(c_int64_t) :: max_iterations
        integer(c_int) :: keep_intermediate
        type(c_ptr) :: guess
        type(c_funptr) :: callback
        type(c_ptr) :: callback_user
    end type mart_options_c

    type, bind(C) :: scene_gaussians_options_c
        real(c_double) :: width_velocity
        real(c_double) :: width_x
        real(c_double) :: width_y
    end type scene_gaussians_options_c

    type, bind(C) :: instrument_params_c
        integer(c_int64_t) :: num_channel
        type(c_ptr) :: angle
        real(c_double) :: dispersion
        real(c_double) :: plate_scale
        real(c_double) :: wavelength_ref
        real(c_double) :: position_ref(2)
        real(c_double) :: area_effective
        real(c_double) :: exposure_time
        real(c_double) :: quantum_yield
        real(c_double) :: read_noise
        integer(c_int64_t) :: num_wavelength
        type(c_ptr) :: wavelength
        integer(c_int64_t) :: num_scene_x
        type(c_ptr) :: scene_x
        integer(c_int64_t) :: num_scene_y
        type(c_ptr) :: scene_y
        integer(c_int64_t) :: num_sensor_x
        type(c_ptr) :: sensor_x
        integer(c_int64_t) :: num_sensor_y
        type(c_ptr) :: sensor_y
        integer(c_int) :: solid_angle_steradian
        integer(c_int) :: value_type
        integer(c_int) :: keep_weights
        type(c_ptr) :: psf
        integer(c_int64_t) :: psf_size(2)
        integer(c_int) :: psf_mode
    end type instrument_params_c

    ! ---- interfaces of the callbacks you may write in Fortran ---------------------------------
    ! Each is a C function pointer in the C API: write a function with the
    ! same arguments and bind(C), and pass it by name (the wrappers take
    ! c_funloc of it) or put c_funloc(f) into a spart_mart_operators.
    abstract interface
        ! A log line (spart_context_set_log): a NUL-terminated C string;
        ! spart_string_from_c(line) gives it as a Fortran string.
        subroutine spart_log_function(user, line) bind(C)
            import :: c_ptr
            type(c_ptr), value :: user
            type(c_ptr), value :: line
        end subroutine spart_log_function

        ! MART forward operator: images and widths (num_channel * image_size
        ! values each) of scene (scene_size values). Return SPART_OK or an
        ! error status (with spart_context_set_error for its sentence).
        function spart_mart_forward_function(user, context, scene, images, widths) bind(C) &
            result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: user
            type(c_ptr), value :: context
            type(c_ptr), value :: scene
            type(c_ptr), value :: images
            type(c_ptr), value :: widths
            integer(c_int) :: status
        end function spart_mart_forward_function

        ! MART backward operator: one scene per channel (num_channel *
        ! scene_size values) from images (num_channel * image_size values).
        function spart_mart_backward_function(user, context, images, scenes) bind(C) &
            result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: user
            type(c_ptr), value :: context
            type(c_ptr), value :: images
            type(c_ptr), value :: scenes
            integer(c_int) :: status
        end function spart_mart_backward_function

        ! MART progress: return 0 to go on, nonzero to stop the run.
        function spart_mart_callback_function(user, progress) bind(C) result(stop)
            import :: c_int, c_ptr, spart_mart_progress
            type(c_ptr), value :: user
            type(spart_mart_progress), intent(in) :: progress
            integer(c_int) :: stop
        end function spart_mart_callback_function
    end interface

    ! ---- the C API (spart/common.h) ------------------------------------------------------
    interface
        pure function c_strlen(text) bind(C, name="strlen") result(length)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: text
            integer(c_size_t) :: length
        end function c_strlen

        function c_spart_status_string(status) bind(C, name="spart_status_string") result(name)
            import :: c_int, c_ptr
            integer(c_int), value :: status
            type(c_ptr) :: name
        end function c_spart_status_string

        function c_spart_version() bind(C, name="spart_version") result(version)
            import :: c_ptr
            type(c_ptr) :: version
        end function c_spart_version

        pure function c_spart_version_number() bind(C, name="spart_version_number") result(number)
            import :: c_int
            integer(c_int) :: number
        end function c_spart_version_number

        function c_spart_context_create(context) bind(C, name="spart_context_create") &
            result(status)
            import :: c_int, c_ptr
            type(c_ptr), intent(inout) :: context
            integer(c_int) :: status
        end function c_spart_context_create

        subroutine c_spart_context_free(context) bind(C, name="spart_context_free")
            import :: c_ptr
            type(c_ptr), value :: context
        end subroutine c_spart_context_free

        function c_spart_context_error(context) bind(C, name="spart_context_error") &
            result(sentence)
            import :: c_ptr
            type(c_ptr), value :: context
            type(c_ptr) :: sentence
        end function c_spart_context_error

        function c_spart_last_error() bind(C, name="spart_last_error") result(sentence)
            import :: c_ptr
            type(c_ptr) :: sentence
        end function c_spart_last_error

        function c_spart_context_set_threads(context, threads) &
            bind(C, name="spart_context_set_threads") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            integer(c_int), value :: threads
            integer(c_int) :: status
        end function c_spart_context_set_threads

        pure function c_spart_context_threads(context) bind(C, name="spart_context_threads") &
            result(threads)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            integer(c_int) :: threads
        end function c_spart_context_threads

        function c_spart_context_set_log(context, log, user) bind(C, name="spart_context_set_log") &
            result(status)
            import :: c_funptr, c_int, c_ptr
            type(c_ptr), value :: context
            type(c_funptr), value :: log
            type(c_ptr), value :: user
            integer(c_int) :: status
        end function c_spart_context_set_log

        ! The C function is variadic (a printf format and its arguments).
        ! Fortran cannot pass variable arguments, so it is called with the
        ! format only (every % of the sentence doubled): the fixed arguments
        ! of a variadic function are passed as those of any other function
        ! on the usual ABIs (x86-64, AArch64, Apple arm64).
        function c_spart_context_set_error(context, status, format) &
            bind(C, name="spart_context_set_error") result(returned)
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: context
            integer(c_int), value :: status
            character(kind=c_char), intent(in) :: format(*)
            integer(c_int) :: returned
        end function c_spart_context_set_error
    end interface

    ! ---- the C API (spart/weights.h) -------------------------------------------------------
    interface
        subroutine c_spart_weights_options_init(options) bind(C, name="spart_weights_options_init")
            import :: weights_options_c
            type(weights_options_c), intent(inout) :: options
        end subroutine c_spart_weights_options_init

        function c_spart_weights_build(context, num_coordinates, coordinates_input, &
                                       coordinates_output, options, weights) &
            bind(C, name="spart_weights_build") result(status)
            import :: array_c, c_int, c_ptr, weights_options_c
            type(c_ptr), value :: context
            integer(c_int), value :: num_coordinates
            type(array_c), intent(in) :: coordinates_input(*)
            type(array_c), intent(in) :: coordinates_output(*)
            type(weights_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: weights
            integer(c_int) :: status
        end function c_spart_weights_build

        function c_spart_weights_create_from_arrays(context, shape_orthogonal, shape_input, &
                                                    shape_output, num_axis_input, axis_input, &
                                                    num_axis_output, axis_output, offsets, &
                                                    indices_input, indices_output, values, &
                                                    weights) &
            bind(C, name="spart_weights_create_from_arrays") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr, shape_c
            type(c_ptr), value :: context
            type(shape_c), intent(in) :: shape_orthogonal
            type(shape_c), intent(in) :: shape_input
            type(shape_c), intent(in) :: shape_output
            integer(c_int), value :: num_axis_input
            integer(c_int), intent(in) :: axis_input(*)
            integer(c_int), value :: num_axis_output
            integer(c_int), intent(in) :: axis_output(*)
            integer(c_int64_t), intent(in) :: offsets(*)
            integer(c_int64_t), intent(in) :: indices_input(*)
            integer(c_int64_t), intent(in) :: indices_output(*)
            real(c_double), intent(in) :: values(*)
            type(c_ptr), intent(inout) :: weights
            integer(c_int) :: status
        end function c_spart_weights_create_from_arrays

        subroutine c_spart_weights_axes(weights, num_axis_input, axis_input, num_axis_output, &
                                        axis_output) bind(C, name="spart_weights_axes")
            import :: c_int, c_ptr
            type(c_ptr), value :: weights
            integer(c_int), intent(out) :: num_axis_input
            integer(c_int), intent(out) :: axis_input(*)
            integer(c_int), intent(out) :: num_axis_output
            integer(c_int), intent(out) :: axis_output(*)
        end subroutine c_spart_weights_axes

        subroutine c_spart_weights_free(weights) bind(C, name="spart_weights_free")
            import :: c_ptr
            type(c_ptr), value :: weights
        end subroutine c_spart_weights_free

        pure function c_spart_weights_shape_orthogonal(weights) &
            bind(C, name="spart_weights_shape_orthogonal") result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: weights
            type(shape_c) :: shape
        end function c_spart_weights_shape_orthogonal

        pure function c_spart_weights_shape_input(weights) &
            bind(C, name="spart_weights_shape_input") &
            result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: weights
            type(shape_c) :: shape
        end function c_spart_weights_shape_input

        pure function c_spart_weights_shape_output(weights) &
            bind(C, name="spart_weights_shape_output") &
            result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: weights
            type(shape_c) :: shape
        end function c_spart_weights_shape_output

        pure function c_spart_weights_num_elements(weights) &
            bind(C, name="spart_weights_num_elements") &
            result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: weights
            integer(c_int64_t) :: count
        end function c_spart_weights_num_elements

        pure function c_spart_weights_num_entries(weights) &
            bind(C, name="spart_weights_num_entries") &
            result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: weights
            integer(c_int64_t) :: count
        end function c_spart_weights_num_entries

        function c_spart_weights_element(weights, element, count, indices_input, indices_output, &
                                         values) bind(C, name="spart_weights_element") &
            result(status)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: weights
            integer(c_int64_t), value :: element
            integer(c_int64_t), intent(out) :: count
            type(c_ptr), intent(out) :: indices_input
            type(c_ptr), intent(out) :: indices_output
            type(c_ptr), intent(out) :: values
            integer(c_int) :: status
        end function c_spart_weights_element

        function c_spart_weights_arrays(weights, offsets, indices_input, indices_output, values) &
            bind(C, name="spart_weights_arrays") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: weights
            type(c_ptr), intent(out) :: offsets
            type(c_ptr), intent(out) :: indices_input
            type(c_ptr), intent(out) :: indices_output
            type(c_ptr), intent(out) :: values
            integer(c_int) :: status
        end function c_spart_weights_arrays

        function c_spart_weights_scale(context, weights, factor_input, factor_output) &
            bind(C, name="spart_weights_scale") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            type(c_ptr), value :: factor_input
            type(c_ptr), value :: factor_output
            integer(c_int) :: status
        end function c_spart_weights_scale

        function c_spart_weights_transpose(context, weights, transposed) &
            bind(C, name="spart_weights_transpose") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            type(c_ptr), intent(inout) :: transposed
            integer(c_int) :: status
        end function c_spart_weights_transpose

        function c_spart_weights_transpose_conservative(context, weights, num_coordinates, &
                                                        coordinates_input, coordinates_output, &
                                                        options, transposed) &
            bind(C, name="spart_weights_transpose_conservative") result(status)
            import :: array_c, c_int, c_ptr, weights_options_c
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            integer(c_int), value :: num_coordinates
            type(array_c), intent(in) :: coordinates_input(*)
            type(array_c), intent(in) :: coordinates_output(*)
            type(weights_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: transposed
            integer(c_int) :: status
        end function c_spart_weights_transpose_conservative

        function c_spart_weights_convolve(context, weights, kernel, convolved) &
            bind(C, name="spart_weights_convolve") result(status)
            import :: array_c, c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            type(array_c), intent(in) :: kernel
            type(c_ptr), intent(inout) :: convolved
            integer(c_int) :: status
        end function c_spart_weights_convolve

        function c_spart_weights_save(context, weights, path, overwrite) &
            bind(C, name="spart_weights_save") result(status)
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            character(kind=c_char), intent(in) :: path(*)
            integer(c_int), value :: overwrite
            integer(c_int) :: status
        end function c_spart_weights_save

        function c_spart_weights_load(context, path, weights) bind(C, name="spart_weights_load") &
            result(status)
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: context
            character(kind=c_char), intent(in) :: path(*)
            type(c_ptr), intent(inout) :: weights
            integer(c_int) :: status
        end function c_spart_weights_load
    end interface

    ! ---- the C API (spart/regridder.h, spart/device.h) -------------------------------------
    interface
        subroutine c_spart_regridder_options_init(options) &
            bind(C, name="spart_regridder_options_init")
            import :: regridder_options_c
            type(regridder_options_c), intent(inout) :: options
        end subroutine c_spart_regridder_options_init

        function c_spart_regridder_create(context, weights, options, regridder) &
            bind(C, name="spart_regridder_create") result(status)
            import :: c_int, c_ptr, regridder_options_c
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            type(regridder_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: regridder
            integer(c_int) :: status
        end function c_spart_regridder_create

        subroutine c_spart_regridder_free(regridder) bind(C, name="spart_regridder_free")
            import :: c_ptr
            type(c_ptr), value :: regridder
        end subroutine c_spart_regridder_free

        pure function c_spart_regridder_shape_input(regridder) &
            bind(C, name="spart_regridder_shape_input") result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: regridder
            type(shape_c) :: shape
        end function c_spart_regridder_shape_input

        pure function c_spart_regridder_shape_output(regridder) &
            bind(C, name="spart_regridder_shape_output") result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: regridder
            type(shape_c) :: shape
        end function c_spart_regridder_shape_output

        pure function c_spart_regridder_num_rows(regridder) &
            bind(C, name="spart_regridder_num_rows") &
            result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: regridder
            integer(c_int64_t) :: count
        end function c_spart_regridder_num_rows

        pure function c_spart_regridder_num_columns(regridder) &
            bind(C, name="spart_regridder_num_columns") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: regridder
            integer(c_int64_t) :: count
        end function c_spart_regridder_num_columns

        pure function c_spart_regridder_num_entries(regridder) &
            bind(C, name="spart_regridder_num_entries") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: regridder
            integer(c_int64_t) :: count
        end function c_spart_regridder_num_entries

        pure function c_spart_regridder_value_type(regridder) &
            bind(C, name="spart_regridder_value_type") result(value_type)
            import :: c_int, c_ptr
            type(c_ptr), value :: regridder
            integer(c_int) :: value_type
        end function c_spart_regridder_value_type

        pure function c_spart_regridder_group_size(regridder) &
            bind(C, name="spart_regridder_group_size") result(group_size)
            import :: c_int, c_ptr
            type(c_ptr), value :: regridder
            integer(c_int) :: group_size
        end function c_spart_regridder_group_size

        function c_spart_regridder_csr(regridder, row_ptr, columns32, columns64, values) &
            bind(C, name="spart_regridder_csr") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: regridder
            type(c_ptr), intent(out) :: row_ptr
            type(c_ptr), intent(out) :: columns32
            type(c_ptr), intent(out) :: columns64
            type(c_ptr), intent(out) :: values
            integer(c_int) :: status
        end function c_spart_regridder_csr

        function c_spart_regridder_apply_shape(context, regridder, shape_x, shape_y) &
            bind(C, name="spart_regridder_apply_shape") result(status)
            import :: c_int, c_ptr, shape_c
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(shape_c), intent(in) :: shape_x
            type(shape_c), intent(out) :: shape_y
            integer(c_int) :: status
        end function c_spart_regridder_apply_shape

        function c_spart_regridder_workspace_size(context, regridder, shape_x, bytes) &
            bind(C, name="spart_regridder_workspace_size") result(status)
            import :: c_int, c_ptr, c_size_t, shape_c
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(shape_c), intent(in) :: shape_x
            integer(c_size_t), intent(out) :: bytes
            integer(c_int) :: status
        end function c_spart_regridder_workspace_size

        function c_spart_regridder_apply(context, regridder, x, y, size_y) &
            bind(C, name="spart_regridder_apply") result(status)
            import :: array_c, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(array_c), intent(in) :: x
            type(c_ptr), value :: y
            integer(c_int64_t), value :: size_y
            integer(c_int) :: status
        end function c_spart_regridder_apply

        function c_spart_regridder_apply_workspace(context, regridder, x, y, size_y, workspace, &
                                                   workspace_bytes) &
            bind(C, name="spart_regridder_apply_workspace") result(status)
            import :: array_c, c_int, c_int64_t, c_ptr, c_size_t
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(array_c), intent(in) :: x
            type(c_ptr), value :: y
            integer(c_int64_t), value :: size_y
            type(c_ptr), value :: workspace
            integer(c_size_t), value :: workspace_bytes
            integer(c_int) :: status
        end function c_spart_regridder_apply_workspace

        function c_spart_regridder_transpose_conservative(context, regridder, num_coordinates, &
                                                          coordinates_input, coordinates_output, &
                                                          options, transposed) &
            bind(C, name="spart_regridder_transpose_conservative") result(status)
            import :: array_c, c_int, c_ptr, weights_options_c
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            integer(c_int), value :: num_coordinates
            type(array_c), intent(in) :: coordinates_input(*)
            type(array_c), intent(in) :: coordinates_output(*)
            type(weights_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: transposed
            integer(c_int) :: status
        end function c_spart_regridder_transpose_conservative

        function c_spart_regridder_transpose(context, regridder, transposed) &
            bind(C, name="spart_regridder_transpose") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(c_ptr), intent(inout) :: transposed
            integer(c_int) :: status
        end function c_spart_regridder_transpose

        function c_spart_regridder_save(context, regridder, path, overwrite) &
            bind(C, name="spart_regridder_save") result(status)
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            character(kind=c_char), intent(in) :: path(*)
            integer(c_int), value :: overwrite
            integer(c_int) :: status
        end function c_spart_regridder_save

        function c_spart_regridder_load(context, path, regridder) &
            bind(C, name="spart_regridder_load") result(status)
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: context
            character(kind=c_char), intent(in) :: path(*)
            type(c_ptr), intent(inout) :: regridder
            integer(c_int) :: status
        end function c_spart_regridder_load

        function c_spart_context_set_cuda_device(context, device) &
            bind(C, name="spart_context_set_cuda_device") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            integer(c_int), value :: device
            integer(c_int) :: status
        end function c_spart_context_set_cuda_device

        function c_spart_context_set_cuda_stream(context, stream) &
            bind(C, name="spart_context_set_cuda_stream") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: stream
            integer(c_int) :: status
        end function c_spart_context_set_cuda_stream

        function c_spart_regridder_create_device(context, weights, options, regridder) &
            bind(C, name="spart_regridder_create_device") result(status)
            import :: c_int, c_ptr, regridder_options_c
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            type(regridder_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: regridder
            integer(c_int) :: status
        end function c_spart_regridder_create_device

        function c_spart_regridder_create_device_convolved(context, weights, kernel, options, &
                                                           regridder) &
            bind(C, name="spart_regridder_create_device_convolved") result(status)
            import :: array_c, c_int, c_ptr, regridder_options_c
            type(c_ptr), value :: context
            type(c_ptr), value :: weights
            type(array_c), intent(in) :: kernel
            type(regridder_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: regridder
            integer(c_int) :: status
        end function c_spart_regridder_create_device_convolved

        function c_spart_regridder_create_device_from_arrays(context, shape_orthogonal, &
                                                             shape_input, shape_output, &
                                                             num_axis_input, axis_input, &
                                                             num_axis_output, axis_output, &
                                                             offsets, indices_input, &
                                                             indices_output, values, options, &
                                                             regridder) &
            bind(C, name="spart_regridder_create_device_from_arrays") result(status)
            import :: c_int, c_int64_t, c_ptr, regridder_options_c, shape_c
            type(c_ptr), value :: context
            type(shape_c), intent(in) :: shape_orthogonal
            type(shape_c), intent(in) :: shape_input
            type(shape_c), intent(in) :: shape_output
            integer(c_int), value :: num_axis_input
            integer(c_int), intent(in) :: axis_input(*)
            integer(c_int), value :: num_axis_output
            integer(c_int), intent(in) :: axis_output(*)
            integer(c_int64_t), intent(in) :: offsets(*)
            type(c_ptr), value :: indices_input
            type(c_ptr), value :: indices_output
            type(c_ptr), value :: values
            type(regridder_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: regridder
            integer(c_int) :: status
        end function c_spart_regridder_create_device_from_arrays

        function c_spart_regridder_to_device(context, regridder, device) &
            bind(C, name="spart_regridder_to_device") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(c_ptr), intent(inout) :: device
            integer(c_int) :: status
        end function c_spart_regridder_to_device

        function c_spart_regridder_to_host(context, regridder, host) &
            bind(C, name="spart_regridder_to_host") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: regridder
            type(c_ptr), intent(inout) :: host
            integer(c_int) :: status
        end function c_spart_regridder_to_host

        pure function c_spart_regridder_cuda_device(regridder) &
            bind(C, name="spart_regridder_cuda_device") result(device)
            import :: c_int, c_ptr
            type(c_ptr), value :: regridder
            integer(c_int) :: device
        end function c_spart_regridder_cuda_device
    end interface

    ! ---- the C API (spart/mart.h) ----------------------------------------------------------
    interface
        function c_spart_mart_operators_from_regridders(context, pair, operators) &
            bind(C, name="spart_mart_operators_from_regridders") result(status)
            import :: c_int, c_ptr, spart_mart_operators
            type(c_ptr), value :: context
            type(c_ptr), value :: pair
            type(spart_mart_operators), intent(inout) :: operators
            integer(c_int) :: status
        end function c_spart_mart_operators_from_regridders

        subroutine c_spart_mart_options_init(options) bind(C, name="spart_mart_options_init")
            import :: mart_options_c
            type(mart_options_c), intent(inout) :: options
        end subroutine c_spart_mart_options_init

        function c_spart_mart_solve(context, operators, observed, options, result) &
            bind(C, name="spart_mart_solve") result(status)
            import :: c_int, c_ptr, mart_options_c, spart_mart_operators
            type(c_ptr), value :: context
            type(spart_mart_operators), intent(in) :: operators
            type(c_ptr), value :: observed
            type(mart_options_c), intent(in) :: options
            type(c_ptr), intent(inout) :: result
            integer(c_int) :: status
        end function c_spart_mart_solve

        subroutine c_spart_mart_result_free(result) bind(C, name="spart_mart_result_free")
            import :: c_ptr
            type(c_ptr), value :: result
        end subroutine c_spart_mart_result_free

        pure function c_spart_mart_result_num_iterations(result) &
            bind(C, name="spart_mart_result_num_iterations") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: result
            integer(c_int64_t) :: count
        end function c_spart_mart_result_num_iterations

        pure function c_spart_mart_result_success(result) &
            bind(C, name="spart_mart_result_success") &
            result(success)
            import :: c_int, c_ptr
            type(c_ptr), value :: result
            integer(c_int) :: success
        end function c_spart_mart_result_success

        function c_spart_mart_result_message(result) bind(C, name="spart_mart_result_message") &
            result(message)
            import :: c_ptr
            type(c_ptr), value :: result
            type(c_ptr) :: message
        end function c_spart_mart_result_message

        pure function c_spart_mart_result_gamma(result) bind(C, name="spart_mart_result_gamma") &
            result(gamma)
            import :: c_double, c_ptr
            type(c_ptr), value :: result
            real(c_double) :: gamma
        end function c_spart_mart_result_gamma

        pure function c_spart_mart_result_num_channel(result) &
            bind(C, name="spart_mart_result_num_channel") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: result
            integer(c_int64_t) :: count
        end function c_spart_mart_result_num_channel

        pure function c_spart_mart_result_scene_size(result) &
            bind(C, name="spart_mart_result_scene_size") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: result
            integer(c_int64_t) :: count
        end function c_spart_mart_result_scene_size

        function c_spart_mart_result_solution(result) bind(C, name="spart_mart_result_solution") &
            result(values)
            import :: c_ptr
            type(c_ptr), value :: result
            type(c_ptr) :: values
        end function c_spart_mart_result_solution

        pure function c_spart_mart_result_num_solutions(result) &
            bind(C, name="spart_mart_result_num_solutions") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: result
            integer(c_int64_t) :: count
        end function c_spart_mart_result_num_solutions

        function c_spart_mart_result_solutions(result, k) &
            bind(C, name="spart_mart_result_solutions") result(values)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: result
            integer(c_int64_t), value :: k
            type(c_ptr) :: values
        end function c_spart_mart_result_solutions

        function c_spart_mart_result_mean_chi_squared(result) &
            bind(C, name="spart_mart_result_mean_chi_squared") result(values)
            import :: c_ptr
            type(c_ptr), value :: result
            type(c_ptr) :: values
        end function c_spart_mart_result_mean_chi_squared

        function c_spart_mart_result_correlation(result) &
            bind(C, name="spart_mart_result_correlation") result(values)
            import :: c_ptr
            type(c_ptr), value :: result
            type(c_ptr) :: values
        end function c_spart_mart_result_correlation

        pure function c_spart_mart_workspace_size(num_channel, image_size, scene_size) &
            bind(C, name="spart_mart_workspace_size") result(bytes)
            import :: c_int64_t, c_size_t
            integer(c_int64_t), value :: num_channel
            integer(c_int64_t), value :: image_size
            integer(c_int64_t), value :: scene_size
            integer(c_size_t) :: bytes
        end function c_spart_mart_workspace_size

        function c_spart_mart_clamp(context, values, n, on_device) &
            bind(C, name="spart_mart_clamp") result(status)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: values
            integer(c_int64_t), value :: n
            integer(c_int), value :: on_device
            integer(c_int) :: status
        end function c_spart_mart_clamp

        function c_spart_mart_noise_widths(context, images, widths, n, gain, read_noise, &
                                           on_device) &
            bind(C, name="spart_mart_noise_widths") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: images
            type(c_ptr), value :: widths
            integer(c_int64_t), value :: n
            real(c_double), value :: gain
            real(c_double), value :: read_noise
            integer(c_int), value :: on_device
            integer(c_int) :: status
        end function c_spart_mart_noise_widths

        function c_spart_mart_merits(context, observed, predicted, widths, num_channel, &
                                     image_size, chi2, correlation, workspace, workspace_bytes, &
                                     on_device) bind(C, name="spart_mart_merits") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr, c_size_t
            type(c_ptr), value :: context
            type(c_ptr), value :: observed
            type(c_ptr), value :: predicted
            type(c_ptr), value :: widths
            integer(c_int64_t), value :: num_channel
            integer(c_int64_t), value :: image_size
            real(c_double), intent(inout) :: chi2(*)
            real(c_double), intent(inout) :: correlation(*)
            type(c_ptr), value :: workspace
            integer(c_size_t), value :: workspace_bytes
            integer(c_int), value :: on_device
            integer(c_int) :: status
        end function c_spart_mart_merits

        function c_spart_mart_flat_guess(context, backprojected, num_channel, scene_size, scene, &
                                         workspace, workspace_bytes, on_device) &
            bind(C, name="spart_mart_flat_guess") result(status)
            import :: c_int, c_int64_t, c_ptr, c_size_t
            type(c_ptr), value :: context
            type(c_ptr), value :: backprojected
            integer(c_int64_t), value :: num_channel
            integer(c_int64_t), value :: scene_size
            type(c_ptr), value :: scene
            type(c_ptr), value :: workspace
            integer(c_size_t), value :: workspace_bytes
            integer(c_int), value :: on_device
            integer(c_int) :: status
        end function c_spart_mart_flat_guess

        function c_spart_mart_update(context, scene, observed_back, predicted_back, num_channel, &
                                     scene_size, gamma, on_device) &
            bind(C, name="spart_mart_update") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: scene
            type(c_ptr), value :: observed_back
            type(c_ptr), value :: predicted_back
            integer(c_int64_t), value :: num_channel
            integer(c_int64_t), value :: scene_size
            real(c_double), value :: gamma
            integer(c_int), value :: on_device
            integer(c_int) :: status
        end function c_spart_mart_update

        function c_spart_mart_update_from_images(context, backward, images, observed_back, &
                                                 num_channel, gamma, scene, predicted_back) &
            bind(C, name="spart_mart_update_from_images") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: backward
            type(c_ptr), value :: images
            type(c_ptr), value :: observed_back
            integer(c_int64_t), value :: num_channel
            real(c_double), value :: gamma
            type(c_ptr), value :: scene
            type(c_ptr), value :: predicted_back
            integer(c_int) :: status
        end function c_spart_mart_update_from_images
    end interface

    ! ---- the C API (spart/device_memory.h) -------------------------------------------------
    interface
        function c_spart_device_malloc(context, bytes, pointer) &
            bind(C, name="spart_device_malloc") &
            result(status)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: context
            integer(c_size_t), value :: bytes
            type(c_ptr), intent(inout) :: pointer
            integer(c_int) :: status
        end function c_spart_device_malloc

        subroutine c_spart_device_free(context, pointer) bind(C, name="spart_device_free")
            import :: c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: pointer
        end subroutine c_spart_device_free

        function c_spart_device_copy_to_device(context, device, host, bytes) &
            bind(C, name="spart_device_copy_to_device") result(status)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: context
            type(c_ptr), value :: device
            type(c_ptr), value :: host
            integer(c_size_t), value :: bytes
            integer(c_int) :: status
        end function c_spart_device_copy_to_device

        function c_spart_device_copy_to_host(context, host, device, bytes) &
            bind(C, name="spart_device_copy_to_host") result(status)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: context
            type(c_ptr), value :: host
            type(c_ptr), value :: device
            integer(c_size_t), value :: bytes
            integer(c_int) :: status
        end function c_spart_device_copy_to_host

        function c_spart_device_copy_on_device(context, to, from, bytes) &
            bind(C, name="spart_device_copy_on_device") result(status)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: context
            type(c_ptr), value :: to
            type(c_ptr), value :: from
            integer(c_size_t), value :: bytes
            integer(c_int) :: status
        end function c_spart_device_copy_on_device
    end interface

    ! ---- the C API (spart/instrument.h) ----------------------------------------------------
    interface
        subroutine c_spart_instrument_params_init(params) &
            bind(C, name="spart_instrument_params_init")
            import :: instrument_params_c
            type(instrument_params_c), intent(inout) :: params
        end subroutine c_spart_instrument_params_init

        function c_spart_instrument_create(context, params, instrument) &
            bind(C, name="spart_instrument_create") result(status)
            import :: c_int, c_ptr, instrument_params_c
            type(c_ptr), value :: context
            type(instrument_params_c), intent(in) :: params
            type(c_ptr), intent(inout) :: instrument
            integer(c_int) :: status
        end function c_spart_instrument_create

        subroutine c_spart_instrument_free(instrument) bind(C, name="spart_instrument_free")
            import :: c_ptr
            type(c_ptr), value :: instrument
        end subroutine c_spart_instrument_free

        pure function c_spart_instrument_num_channel(instrument) &
            bind(C, name="spart_instrument_num_channel") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: instrument
            integer(c_int64_t) :: count
        end function c_spart_instrument_num_channel

        pure function c_spart_instrument_scene_size(instrument) &
            bind(C, name="spart_instrument_scene_size") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: instrument
            integer(c_int64_t) :: count
        end function c_spart_instrument_scene_size

        pure function c_spart_instrument_image_size(instrument) &
            bind(C, name="spart_instrument_image_size") result(count)
            import :: c_int64_t, c_ptr
            type(c_ptr), value :: instrument
            integer(c_int64_t) :: count
        end function c_spart_instrument_image_size

        function c_spart_instrument_forward(instrument) bind(C, name="spart_instrument_forward") &
            result(regridder)
            import :: c_ptr
            type(c_ptr), value :: instrument
            type(c_ptr) :: regridder
        end function c_spart_instrument_forward

        function c_spart_instrument_backward(instrument) &
            bind(C, name="spart_instrument_backward") result(regridder)
            import :: c_ptr
            type(c_ptr), value :: instrument
            type(c_ptr) :: regridder
        end function c_spart_instrument_backward

        function c_spart_instrument_psf(instrument) bind(C, name="spart_instrument_psf") &
            result(psf)
            import :: c_ptr
            type(c_ptr), value :: instrument
            type(c_ptr) :: psf
        end function c_spart_instrument_psf

        function c_spart_instrument_photons_per_radiance(instrument) &
            bind(C, name="spart_instrument_photons_per_radiance") result(values)
            import :: c_ptr
            type(c_ptr), value :: instrument
            type(c_ptr) :: values
        end function c_spart_instrument_photons_per_radiance

        function c_spart_instrument_image(context, instrument, scene, images, widths) &
            bind(C, name="spart_instrument_image") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: instrument
            type(c_ptr), value :: scene
            type(c_ptr), value :: images
            type(c_ptr), value :: widths
            integer(c_int) :: status
        end function c_spart_instrument_image

        function c_spart_instrument_backproject(context, instrument, images, scenes) &
            bind(C, name="spart_instrument_backproject") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: instrument
            type(c_ptr), value :: images
            type(c_ptr), value :: scenes
            integer(c_int) :: status
        end function c_spart_instrument_backproject

        function c_spart_instrument_observe(context, instrument, scene, seed, images, widths) &
            bind(C, name="spart_instrument_observe") result(status)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: instrument
            type(c_ptr), value :: scene
            integer(c_int64_t), value :: seed ! uint64_t in C
            type(c_ptr), value :: images
            type(c_ptr), value :: widths
            integer(c_int) :: status
        end function c_spart_instrument_observe

        function c_spart_instrument_mart_operators(context, instrument, pair, operators) &
            bind(C, name="spart_instrument_mart_operators") result(status)
            import :: c_int, c_ptr, spart_mart_operators
            type(c_ptr), value :: context
            type(c_ptr), value :: instrument
            type(c_ptr), value :: pair
            type(spart_mart_operators), intent(inout) :: operators
            integer(c_int) :: status
        end function c_spart_instrument_mart_operators
    end interface

    ! ---- the C API (spart/scene.h) ---------------------------------------------------------
    interface
        subroutine c_spart_scene_gaussians_options_init(options) &
            bind(C, name="spart_scene_gaussians_options_init")
            import :: scene_gaussians_options_c
            type(scene_gaussians_options_c), intent(inout) :: options
        end subroutine c_spart_scene_gaussians_options_init

        function c_spart_wavelength_from_velocity(context, wavelength_rest, count, velocity, &
                                                  wavelength) &
            bind(C, name="spart_wavelength_from_velocity") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            real(c_double), value :: wavelength_rest
            integer(c_int64_t), value :: count
            type(c_ptr), value :: velocity
            type(c_ptr), value :: wavelength
            integer(c_int) :: status
        end function c_spart_wavelength_from_velocity

        function c_spart_scene_gaussians(context, wavelength_rest, num_wavelength, velocity, &
                                         num_x, x, num_y, y, options, wavelength, scene) &
            bind(C, name="spart_scene_gaussians") result(status)
            import :: c_double, c_int, c_int64_t, c_ptr, scene_gaussians_options_c
            type(c_ptr), value :: context
            real(c_double), value :: wavelength_rest
            integer(c_int64_t), value :: num_wavelength
            type(c_ptr), value :: velocity
            integer(c_int64_t), value :: num_x
            type(c_ptr), value :: x
            integer(c_int64_t), value :: num_y
            type(c_ptr), value :: y
            type(scene_gaussians_options_c), intent(in) :: options
            type(c_ptr), value :: wavelength
            type(c_ptr), value :: scene
            integer(c_int) :: status
        end function c_spart_scene_gaussians
    end interface

    ! ---- the C API (spart/psf.h) -----------------------------------------------------------
    interface
        function c_spart_psf_create(context, kernels, shape_image, psf) &
            bind(C, name="spart_psf_create") result(status)
            import :: array_c, c_int, c_ptr, shape_c
            type(c_ptr), value :: context
            type(array_c), intent(in) :: kernels
            type(shape_c), intent(in) :: shape_image
            type(c_ptr), intent(inout) :: psf
            integer(c_int) :: status
        end function c_spart_psf_create

        subroutine c_spart_psf_free(psf) bind(C, name="spart_psf_free")
            import :: c_ptr
            type(c_ptr), value :: psf
        end subroutine c_spart_psf_free

        function c_spart_psf_to_device(context, psf, device) &
            bind(C, name="spart_psf_to_device") result(status)
            import :: c_int, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: psf
            type(c_ptr), intent(inout) :: device
            integer(c_int) :: status
        end function c_spart_psf_to_device

        pure function c_spart_psf_cuda_device(psf) bind(C, name="spart_psf_cuda_device") &
            result(device)
            import :: c_int, c_ptr
            type(c_ptr), value :: psf
            integer(c_int) :: device
        end function c_spart_psf_cuda_device

        pure function c_spart_psf_shape_image(psf) bind(C, name="spart_psf_shape_image") &
            result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: psf
            type(shape_c) :: shape
        end function c_spart_psf_shape_image

        pure function c_spart_psf_shape_kernels(psf) bind(C, name="spart_psf_shape_kernels") &
            result(shape)
            import :: c_ptr, shape_c
            type(c_ptr), value :: psf
            type(shape_c) :: shape
        end function c_spart_psf_shape_kernels

        function c_spart_psf_apply(context, psf, input, output, size_output) &
            bind(C, name="spart_psf_apply") result(status)
            import :: array_c, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: psf
            type(array_c), intent(in) :: input
            type(c_ptr), value :: output
            integer(c_int64_t), value :: size_output
            integer(c_int) :: status
        end function c_spart_psf_apply

        function c_spart_psf_apply_adjoint(context, psf, input, output, size_output) &
            bind(C, name="spart_psf_apply_adjoint") result(status)
            import :: array_c, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            type(c_ptr), value :: psf
            type(array_c), intent(in) :: input
            type(c_ptr), value :: output
            integer(c_int64_t), value :: size_output
            integer(c_int) :: status
        end function c_spart_psf_apply_adjoint

        function c_spart_mart_operators_from_regridders_psf(context, problem, operators) &
            bind(C, name="spart_mart_operators_from_regridders_psf") result(status)
            import :: c_int, c_ptr, spart_mart_operators
            type(c_ptr), value :: context
            type(c_ptr), value :: problem
            type(spart_mart_operators), intent(inout) :: operators
            integer(c_int) :: status
        end function c_spart_mart_operators_from_regridders_psf

        function c_spart_psf_gaussian(context, sigma_major, sigma_minor, angle, size, kernel, &
                                      size_kernel) bind(C, name="spart_psf_gaussian") &
            result(status)
            import :: c_double, c_int, c_int64_t, c_ptr
            type(c_ptr), value :: context
            real(c_double), value :: sigma_major
            real(c_double), value :: sigma_minor
            real(c_double), value :: angle
            integer(c_int64_t), intent(in) :: size(2)
            type(c_ptr), value :: kernel
            integer(c_int64_t), value :: size_kernel
            integer(c_int) :: status
        end function c_spart_psf_gaussian
    end interface

    ! ---- public routines ---------------------------------------------------------------------
    public :: spart_status_string, spart_version, spart_version_number, spart_string_from_c
    public :: spart_context_create, spart_context_free, spart_context_error, spart_last_error
    public :: spart_context_set_threads, spart_context_threads, spart_context_set_log
    public :: spart_context_set_error
    public :: spart_array_of
    public :: spart_weights_build, spart_weights_create_from_arrays, spart_weights_axes
    public :: spart_weights_free, spart_weights_shape_orthogonal, spart_weights_shape_input
    public :: spart_weights_shape_output, spart_weights_num_elements, spart_weights_num_entries
    public :: spart_weights_element, spart_weights_arrays, spart_weights_scale
    public :: spart_weights_transpose, spart_weights_transpose_conservative
    public :: spart_weights_save, spart_weights_load
    public :: spart_weights_convolve
    public :: spart_regridder_create, spart_regridder_free, spart_regridder_shape_input
    public :: spart_regridder_shape_output, spart_regridder_num_rows, spart_regridder_num_columns
    public :: spart_regridder_num_entries, spart_regridder_value_type, spart_regridder_group_size
    public :: spart_regridder_csr, spart_regridder_apply_shape, spart_regridder_workspace_size
    public :: spart_regridder_apply, spart_regridder_apply_pointer
    public :: spart_regridder_transpose, spart_regridder_transpose_conservative
    public :: spart_regridder_save, spart_regridder_load
    public :: spart_context_set_cuda_device, spart_context_set_cuda_stream
    public :: spart_regridder_create_device, spart_regridder_to_device, spart_regridder_to_host
    public :: spart_regridder_create_device_convolved
    public :: spart_regridder_create_device_from_arrays_pointer
    public :: spart_regridder_cuda_device
    public :: spart_mart_operators_from_regridders, spart_mart_solve, spart_mart_solve_pointer
    public :: spart_mart_result_free, spart_mart_result_num_iterations, spart_mart_result_success
    public :: spart_mart_result_message, spart_mart_result_gamma, spart_mart_result_num_channel
    public :: spart_mart_result_scene_size, spart_mart_result_solution
    public :: spart_mart_result_num_solutions, spart_mart_result_solutions
    public :: spart_mart_result_mean_chi_squared, spart_mart_result_correlation
    public :: spart_mart_workspace_size, spart_mart_clamp, spart_mart_noise_widths
    public :: spart_mart_merits, spart_mart_flat_guess, spart_mart_update
    public :: spart_mart_update_from_images
    public :: spart_device_malloc, spart_device_free, spart_device_copy_to_device
    public :: spart_device_copy_to_host, spart_device_copy_on_device
    public :: spart_instrument_create, spart_instrument_free, spart_instrument_num_channel
    public :: spart_instrument_scene_size, spart_instrument_image_size
    public :: spart_instrument_forward, spart_instrument_backward
    public :: spart_instrument_photons_per_radiance, spart_instrument_image
    public :: spart_instrument_backproject, spart_instrument_observe
    public :: spart_instrument_mart_operators
    public :: spart_instrument_psf
    public :: spart_psf_create, spart_psf_free, spart_psf_shape_image, spart_psf_shape_kernels
    public :: spart_psf_apply, spart_psf_apply_adjoint, spart_psf_apply_pointer
    public :: spart_psf_apply_adjoint_pointer, spart_mart_operators_from_regridders_psf
    public :: spart_psf_gaussian
    public :: spart_psf_to_device, spart_psf_cuda_device
    public :: spart_wavelength_from_velocity, spart_scene_gaussians
    public :: spart_mart_forward_function, spart_mart_backward_function
    public :: spart_mart_callback_function, spart_log_function

    ! A copy of an array of rank 1 to 4 as a spart_array.
    interface spart_array_of
        module procedure array_of_1, array_of_2, array_of_3, array_of_4
    end interface spart_array_of

    ! y = A x for x and y of rank 1 to 4 (see spart_regridder_apply below).
    interface spart_regridder_apply
        module procedure apply_1_1, apply_1_2, apply_1_3, apply_1_4
        module procedure apply_2_1, apply_2_2, apply_2_3, apply_2_4
        module procedure apply_3_1, apply_3_2, apply_3_3, apply_3_4
        module procedure apply_4_1, apply_4_2, apply_4_3, apply_4_4
    end interface spart_regridder_apply

    ! MART on observed images of rank 1 to 4.
    interface spart_mart_solve
        module procedure mart_solve_1, mart_solve_2, mart_solve_3, mart_solve_4
    end interface spart_mart_solve

    ! The instrument's products on arrays in their natural shapes (scene
    ! (num_scene_y, num_scene_x, num_wavelength), images (num_sensor_y,
    ! num_sensor_x, num_channel), backprojected scenes (num_scene_y,
    ! num_scene_x, num_wavelength, num_channel)) or flat (rank 1).
    interface spart_instrument_image
        module procedure instrument_image_1_1, instrument_image_1_3
        module procedure instrument_image_3_1, instrument_image_3_3
    end interface spart_instrument_image

    interface spart_instrument_observe
        module procedure instrument_observe_1_1, instrument_observe_1_3
        module procedure instrument_observe_3_1, instrument_observe_3_3
    end interface spart_instrument_observe

    interface spart_instrument_backproject
        module procedure instrument_backproject_1_1, instrument_backproject_1_4
        module procedure instrument_backproject_3_1, instrument_backproject_3_4
    end interface spart_instrument_backproject

    ! The PSF and its adjoint on images of rank 1 to 4 (see spart_psf_apply
    ! below); input and output of the same rank.
    interface spart_psf_apply
        module procedure psf_apply_1, psf_apply_2, psf_apply_3, psf_apply_4
    end interface spart_psf_apply

    interface spart_psf_apply_adjoint
        module procedure psf_apply_adjoint_1, psf_apply_adjoint_2, psf_apply_adjoint_3
        module procedure psf_apply_adjoint_4
    end interface spart_psf_apply_adjoint

contains

    ! ==== strings, shapes and addresses (private helpers) ======================================

    ! A NUL-terminated C string as a Fortran string ("" for a null pointer).
    function spart_string_from_c(text) result(string)
        type(c_ptr), intent(in) :: text
        character(len=:), allocatable :: string
        character(kind=c_char), pointer :: characters(:)
        integer :: length, k
        if (.not. c_associated(text)) then
            string = ''
            return
        end if
        length = int(c_strlen(text))
        call c_f_pointer(text, characters, [length])
        allocate (character(len=length) :: string)
        do k = 1, length
            string(k:k) = characters(k)
        end do
    end function spart_string_from_c

    ! A Fortran string as a NUL-terminated C string (trailing blanks dropped,
    ! as Fortran pads fixed-length strings with them).
    function c_string(text) result(string)
        character(len=*), intent(in) :: text
        character(kind=c_char, len=:), allocatable :: string
        string = trim(text)//c_null_char
    end function c_string

    ! A C shape from extents in Fortran order (reversed). Extents beyond
    ! SPART_MAX_NDIM are left out; callers check the count first.
    pure function c_shape(extents) result(shape)
        integer(c_int64_t), intent(in) :: extents(:)
        type(shape_c) :: shape
        integer :: ndim, k
        ndim = min(size(extents), int(SPART_MAX_NDIM))
        shape%ndim = int(ndim, c_int)
        shape%dims = 0
        do k = 1, ndim
            shape%dims(k) = extents(ndim + 1 - k)
        end do
    end function c_shape

    ! The extents of a C shape in Fortran order (reversed).
    pure function fortran_shape(shape) result(extents)
        type(shape_c), intent(in) :: shape
        integer(c_int64_t), allocatable :: extents(:)
        integer :: ndim, k
        ndim = max(0, min(int(shape%ndim), int(SPART_MAX_NDIM)))
        allocate (extents(ndim))
        do k = 1, ndim
            extents(k) = shape%dims(ndim + 1 - k)
        end do
    end function fortran_shape

    ! A C view of a spart_array (valid while `array` is).
    function c_array(array) result(view)
        type(spart_array), intent(in), target :: array
        type(array_c) :: view
        view%data = c_null_ptr
        if (allocated(array%values)) then
            if (size(array%values) > 0) view%data = c_loc(array%values)
        end if
        if (allocated(array%dims)) then
            view%shape = c_shape(array%dims)
        else
            view%shape = c_shape([integer(c_int64_t) ::])
        end if
    end function c_array

    ! Record a sentence of the Fortran wrappers in the context, as the
    ! library records its own, and return `status`.
    function fail(context, status, sentence) result(returned)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: sentence
        integer(c_int) :: returned
        returned = spart_context_set_error(context, status, sentence)
    end function fail

    ! A 64-bit integer as text, for sentences.
    function text_of(number) result(text)
        integer(c_int64_t), intent(in) :: number
        character(len=:), allocatable :: text
        character(len=24) :: buffer
        write (buffer, '(i0)') number
        text = trim(buffer)
    end function text_of

    ! Whether `count` numbers (axes, extents) fit into a C struct's array.
    function fits_ndim(context, count, what, status) result(fits)
        type(spart_context), intent(in) :: context
        integer, intent(in) :: count
        character(len=*), intent(in) :: what
        integer(c_int), intent(out) :: status
        logical :: fits
        fits = count <= SPART_MAX_NDIM
        status = SPART_OK
        if (.not. fits) then
            status = fail(context, SPART_ERROR_INVALID_ARGUMENT, what//' has '// &
                          text_of(int(count, c_int64_t))//' numbers, more than SPART_MAX_NDIM = 16')
        end if
    end function fits_ndim

    ! ==== status, version, context (spart/common.h) ===========================================

    ! The name of a status code, such as "SPART_ERROR_NULL_POINTER".
    function spart_status_string(status) result(name)
        integer(c_int), intent(in) :: status
        character(len=:), allocatable :: name
        name = spart_string_from_c(c_spart_status_string(status))
    end function spart_status_string

    ! The version of the C library linked, "MAJOR.MINOR.PATCH".
    function spart_version() result(version)
        character(len=:), allocatable :: version
        version = spart_string_from_c(c_spart_version())
    end function spart_version

    ! The version as MAJOR*10000 + MINOR*100 + PATCH.
    pure function spart_version_number() result(number)
        integer(c_int) :: number
        number = c_spart_version_number()
    end function spart_version_number

    ! Make a context (free it with spart_context_free). On failure the
    ! handle stays null and spart_last_error() says why.
    function spart_context_create(context) result(status)
        type(spart_context), intent(out) :: context
        integer(c_int) :: status
        status = c_spart_context_create(context%handle)
    end function spart_context_create

    ! Free a context (after every object made in it). Accepts a null handle.
    subroutine spart_context_free(context)
        type(spart_context), intent(inout) :: context
        call c_spart_context_free(context%handle)
        context%handle = c_null_ptr
    end subroutine spart_context_free

    ! The sentence of the last error in this context ("" if the last call
    ! succeeded); for a null handle, the thread's last error.
    function spart_context_error(context) result(sentence)
        type(spart_context), intent(in) :: context
        character(len=:), allocatable :: sentence
        sentence = spart_string_from_c(c_spart_context_error(context%handle))
    end function spart_context_error

    ! The sentence of the last error of any spart call on this thread.
    function spart_last_error() result(sentence)
        character(len=:), allocatable :: sentence
        sentence = spart_string_from_c(c_spart_last_error())
    end function spart_last_error

    ! Use `threads` OpenMP threads in this context's host work (0: the
    ! OpenMP default).
    function spart_context_set_threads(context, threads) result(status)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: threads
        integer(c_int) :: status
        status = c_spart_context_set_threads(context%handle, threads)
    end function spart_context_set_threads

    ! The number of host threads this context's work uses.
    pure function spart_context_threads(context) result(threads)
        type(spart_context), intent(in) :: context
        integer(c_int) :: threads
        threads = c_spart_context_threads(context%handle)
    end function spart_context_threads

    ! Send the library's log lines to `log` with `user` (both optional:
    ! without `log` the lines are discarded).
    function spart_context_set_log(context, log, user) result(status)
        type(spart_context), intent(in) :: context
        procedure(spart_log_function), optional :: log
        type(c_ptr), intent(in), optional :: user
        integer(c_int) :: status
        type(c_funptr) :: function_pointer
        type(c_ptr) :: user_pointer
        function_pointer = c_null_funptr
        user_pointer = c_null_ptr
        if (present(log)) function_pointer = c_funloc(log)
        if (present(user)) user_pointer = user
        status = c_spart_context_set_log(context%handle, function_pointer, user_pointer)
    end function spart_context_set_log

    ! Record an error sentence in the context as the library does (for your
    ! own callbacks) and return `status`.
    function spart_context_set_error(context, status, sentence) result(returned)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: sentence
        integer(c_int) :: returned
        character(len=:), allocatable :: format
        integer :: k
        ! The C function takes a printf format: every % must be doubled.
        format = ''
        do k = 1, len(sentence)
            if (sentence(k:k) == '%') then
                format = format//'%%'
            else
                format = format//sentence(k:k)
            end if
        end do
        returned = c_spart_context_set_error(context%handle, status, c_string(format))
    end function spart_context_set_error

    ! ==== arrays (copies with their shape) =====================================================

    function array_of_1(a) result(array)
        real(c_double), intent(in) :: a(:)
        type(spart_array) :: array
        allocate (array%values(size(a)), array%dims(1))
        array%values = a
        array%dims = shape(a, c_int64_t)
    end function array_of_1

    function array_of_2(a) result(array)
        real(c_double), intent(in) :: a(:, :)
        type(spart_array) :: array
        allocate (array%values(size(a)), array%dims(2))
        array%values = reshape(a, [size(a)])
        array%dims = shape(a, c_int64_t)
    end function array_of_2

    function array_of_3(a) result(array)
        real(c_double), intent(in) :: a(:, :, :)
        type(spart_array) :: array
        allocate (array%values(size(a)), array%dims(3))
        array%values = reshape(a, [size(a)])
        array%dims = shape(a, c_int64_t)
    end function array_of_3

    function array_of_4(a) result(array)
        real(c_double), intent(in) :: a(:, :, :, :)
        type(spart_array) :: array
        allocate (array%values(size(a)), array%dims(4))
        array%values = reshape(a, [size(a)])
        array%dims = shape(a, c_int64_t)
    end function array_of_4

    ! ==== weights (spart/weights.h) ============================================================

    ! Fill C weights options from the optional arguments, starting from the
    ! library's defaults. `factor` receives the view of weights_input, which
    ! the options point at: it must outlive their use.
    function weights_options(context, options, factor, method, bounds, perturb, seed, &
                             algorithm, coalesce, axis_input, axis_output, weights_input) &
        result(status)
        type(spart_context), intent(in) :: context
        type(weights_options_c), intent(out) :: options
        type(array_c), intent(inout), target :: factor
        integer(c_int), intent(in), optional :: method, bounds, perturb, algorithm
        integer(c_int64_t), intent(in), optional :: seed
        logical, intent(in), optional :: coalesce
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        type(spart_array), intent(in), optional, target :: weights_input
        integer(c_int) :: status
        call c_spart_weights_options_init(options)
        status = SPART_OK
        if (present(method)) options%method = method
        if (present(bounds)) options%bounds = bounds
        if (present(perturb)) options%perturb = perturb
        if (present(seed)) options%seed = seed
        if (present(algorithm)) options%algorithm = algorithm
        if (present(coalesce)) options%coalesce = merge(1_c_int, 0_c_int, coalesce)
        if (present(axis_input)) then
            if (.not. fits_ndim(context, size(axis_input), 'axis_input', status)) return
            options%num_axis_input = size(axis_input, kind=c_int)
            options%axis_input(1:size(axis_input)) = axis_input
        end if
        if (present(axis_output)) then
            if (.not. fits_ndim(context, size(axis_output), 'axis_output', status)) return
            options%num_axis_output = size(axis_output, kind=c_int)
            options%axis_output(1:size(axis_output)) = axis_output
        end if
        if (present(weights_input)) then
            factor = c_array(weights_input)
            options%weights_input = c_loc(factor)
        end if
    end function weights_options

    ! C views of two grids; fails unless they have as many coordinates.
    function grid_views(context, coordinates_input, coordinates_output, inputs, outputs) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_array), intent(in), target :: coordinates_input(:), coordinates_output(:)
        type(array_c), intent(out) :: inputs(:), outputs(:)
        integer(c_int) :: status
        integer :: k
        status = SPART_OK
        if (size(coordinates_input) /= size(coordinates_output)) then
            status = fail(context, SPART_ERROR_INVALID_ARGUMENT, 'coordinates_input has '// &
                          text_of(size(coordinates_input, kind=c_int64_t))// &
                          ' arrays and coordinates_output '// &
                          text_of(size(coordinates_output, kind=c_int64_t))// &
                          ': give one per resampled dimension on both sides')
            return
        end if
        do k = 1, size(coordinates_input)
            inputs(k) = c_array(coordinates_input(k))
            outputs(k) = c_array(coordinates_output(k))
        end do
    end function grid_views

    ! Weights between two grids, as regridding.weights(): coordinates_input
    ! and coordinates_output hold one array per resampled dimension (1 to 3;
    ! conservative: 1 or 2), vertices, broadcast together, for example
    !   [spart_array_of(x), spart_array_of(y)]
    ! with x(nx, ny) and y(nx, ny) for a curvilinear 2-D grid (its cells then
    ! hold values v(nx - 1, ny - 1)). Optional arguments as the fields of
    ! spart_weights_options (their C defaults when absent): method, bounds,
    ! perturb, seed, algorithm, coalesce, axis_input, axis_output (C axes:
    ! -d is Fortran dimension d), weights_input.
    function spart_weights_build(context, coordinates_input, coordinates_output, weights, &
                                 method, bounds, perturb, seed, algorithm, coalesce, axis_input, &
                                 axis_output, weights_input) result(status)
        type(spart_context), intent(in) :: context
        type(spart_array), intent(in), target :: coordinates_input(:), coordinates_output(:)
        type(spart_weights), intent(out) :: weights
        integer(c_int), intent(in), optional :: method, bounds, perturb, algorithm
        integer(c_int64_t), intent(in), optional :: seed
        logical, intent(in), optional :: coalesce
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        type(spart_array), intent(in), optional, target :: weights_input
        integer(c_int) :: status
        type(weights_options_c) :: options
        type(array_c), target :: factor
        type(array_c) :: inputs(size(coordinates_input)), outputs(size(coordinates_input))
        status = grid_views(context, coordinates_input, coordinates_output, inputs, outputs)
        if (status /= SPART_OK) return
        status = weights_options(context, options, factor, method, bounds, perturb, seed, &
                                 algorithm, coalesce, axis_input, axis_output, weights_input)
        if (status /= SPART_OK) return
        status = c_spart_weights_build(context%handle, size(inputs, kind=c_int), inputs, outputs, &
                                       options, weights%handle)
    end function spart_weights_build

    ! The layout of weights given as arrays, checked where C cannot check it
    ! (the counts of numbers, and offsets' length against shape_orthogonal),
    ! with the weights' resampled axes as C takes them (absent: every axis).
    function weights_layout(context, shape_orthogonal, shape_input, shape_output, offsets, &
                            axes_in, num_in, axes_out, num_out, axis_input, axis_output) &
        result(status)
        type(spart_context), intent(in) :: context
        integer(c_int64_t), intent(in) :: shape_orthogonal(:), shape_input(:), shape_output(:)
        integer(c_int64_t), intent(in) :: offsets(:)
        integer(c_int), intent(out) :: axes_in(SPART_MAX_NDIM), axes_out(SPART_MAX_NDIM)
        integer(c_int), intent(out) :: num_in, num_out
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int) :: status
        axes_in = 0
        axes_out = 0
        num_in = 0
        num_out = 0
        if (.not. fits_ndim(context, size(shape_orthogonal), 'shape_orthogonal', status)) return
        if (.not. fits_ndim(context, size(shape_input), 'shape_input', status)) return
        if (.not. fits_ndim(context, size(shape_output), 'shape_output', status)) return
        if (present(axis_input)) then
            if (.not. fits_ndim(context, size(axis_input), 'axis_input', status)) return
            num_in = size(axis_input, kind=c_int)
            axes_in(1:num_in) = axis_input
        end if
        if (present(axis_output)) then
            if (.not. fits_ndim(context, size(axis_output), 'axis_output', status)) return
            num_out = size(axis_output, kind=c_int)
            axes_out(1:num_out) = axis_output
        end if
        ! The C function reads offsets[num_elements]: check the size it
        ! cannot see.
        if (size(offsets) < 1) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, &
                          'offsets is empty: it needs num_elements + 1 values')
            return
        end if
        if (size(offsets) /= product(shape_orthogonal) + 1) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'offsets has '// &
                          text_of(size(offsets, kind=c_int64_t))//' values, but '// &
                          'shape_orthogonal has '//text_of(product(shape_orthogonal))// &
                          ' elements (it needs one more)')
            return
        end if
        status = SPART_OK
    end function weights_layout

    ! Weights from your arrays (copied), as spart_weights_create_from_arrays:
    ! shapes in Fortran order, offsets (num_elements + 1 values, 0-based
    ! positions), indices as C flat indices (0-based; the Fortran linear
    ! index minus 1), axes as C axes (optional: every axis).
    function spart_weights_create_from_arrays(context, shape_orthogonal, shape_input, &
                                              shape_output, offsets, indices_input, &
                                              indices_output, values, weights, axis_input, &
                                              axis_output) result(status)
        type(spart_context), intent(in) :: context
        integer(c_int64_t), intent(in) :: shape_orthogonal(:), shape_input(:), shape_output(:)
        integer(c_int64_t), intent(in) :: offsets(:), indices_input(:), indices_output(:)
        real(c_double), intent(in) :: values(:)
        type(spart_weights), intent(out) :: weights
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int) :: status
        integer(c_int) :: axes_in(SPART_MAX_NDIM), axes_out(SPART_MAX_NDIM)
        integer(c_int) :: num_in, num_out
        integer(c_int64_t) :: entries
        status = weights_layout(context, shape_orthogonal, shape_input, shape_output, offsets, &
                                axes_in, num_in, axes_out, num_out, axis_input, axis_output)
        if (status /= SPART_OK) return
        ! The C function reads offsets[num_elements] entries of each array.
        entries = offsets(size(offsets))
        if (size(indices_input) < entries .or. size(indices_output) < entries .or. &
            size(values) < entries) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'offsets ends at '// &
                          text_of(entries)//' entries, but indices_input, indices_output and '// &
                          'values hold '//text_of(size(indices_input, kind=c_int64_t))//', '// &
                          text_of(size(indices_output, kind=c_int64_t))//' and '// &
                          text_of(size(values, kind=c_int64_t)))
            return
        end if
        status = c_spart_weights_create_from_arrays(context%handle, c_shape(shape_orthogonal), &
                                                    c_shape(shape_input), c_shape(shape_output), &
                                                    num_in, axes_in, num_out, axes_out, offsets, &
                                                    indices_input, indices_output, values, &
                                                    weights%handle)
    end function spart_weights_create_from_arrays

    ! The resampled axes of the weights' input and output shapes, as C axes
    ! (non-negative, ascending: C axis a of an n-axis shape is Fortran
    ! dimension n - a).
    subroutine spart_weights_axes(weights, axis_input, axis_output)
        type(spart_weights), intent(in) :: weights
        integer(c_int), allocatable, intent(out) :: axis_input(:), axis_output(:)
        integer(c_int) :: num_in, num_out, axes_in(SPART_MAX_NDIM), axes_out(SPART_MAX_NDIM)
        num_in = 0
        num_out = 0
        call c_spart_weights_axes(weights%handle, num_in, axes_in, num_out, axes_out)
        axis_input = axes_in(1:num_in)
        axis_output = axes_out(1:num_out)
    end subroutine spart_weights_axes

    ! Free weights. Accepts a null handle.
    subroutine spart_weights_free(weights)
        type(spart_weights), intent(inout) :: weights
        call c_spart_weights_free(weights%handle)
        weights%handle = c_null_ptr
    end subroutine spart_weights_free

    ! The shapes of the weights, in Fortran order.
    pure function spart_weights_shape_orthogonal(weights) result(extents)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_weights_shape_orthogonal(weights%handle))
    end function spart_weights_shape_orthogonal

    pure function spart_weights_shape_input(weights) result(extents)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_weights_shape_input(weights%handle))
    end function spart_weights_shape_input

    pure function spart_weights_shape_output(weights) result(extents)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_weights_shape_output(weights%handle))
    end function spart_weights_shape_output

    pure function spart_weights_num_elements(weights) result(count)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t) :: count
        count = c_spart_weights_num_elements(weights%handle)
    end function spart_weights_num_elements

    pure function spart_weights_num_entries(weights) result(count)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t) :: count
        count = c_spart_weights_num_entries(weights%handle)
    end function spart_weights_num_entries

    ! The arrays of element `element` (a C flat index into the orthogonal
    ! shape, 0-based) as pointers into the weights.
    function spart_weights_element(weights, element, indices_input, indices_output, values) &
        result(status)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t), intent(in) :: element
        integer(c_int64_t), pointer, intent(out) :: indices_input(:), indices_output(:)
        real(c_double), pointer, intent(out) :: values(:)
        integer(c_int) :: status
        integer(c_int64_t) :: count
        type(c_ptr) :: p_input, p_output, p_values
        nullify (indices_input, indices_output, values)
        count = 0
        status = c_spart_weights_element(weights%handle, element, count, p_input, p_output, &
                                         p_values)
        if (status /= SPART_OK) return
        call c_f_pointer(p_input, indices_input, [count])
        call c_f_pointer(p_output, indices_output, [count])
        call c_f_pointer(p_values, values, [count])
    end function spart_weights_element

    ! The concatenated arrays of all elements and the num_elements + 1
    ! offsets (0-based positions) that split them, as pointers.
    function spart_weights_arrays(weights, offsets, indices_input, indices_output, values) &
        result(status)
        type(spart_weights), intent(in) :: weights
        integer(c_int64_t), pointer, intent(out) :: offsets(:), indices_input(:), indices_output(:)
        real(c_double), pointer, intent(out) :: values(:)
        integer(c_int) :: status
        integer(c_int64_t) :: count, elements
        type(c_ptr) :: p_offsets, p_input, p_output, p_values
        nullify (offsets, indices_input, indices_output, values)
        status = c_spart_weights_arrays(weights%handle, p_offsets, p_input, p_output, p_values)
        if (status /= SPART_OK) return
        elements = c_spart_weights_num_elements(weights%handle)
        count = c_spart_weights_num_entries(weights%handle)
        call c_f_pointer(p_offsets, offsets, [elements + 1])
        call c_f_pointer(p_input, indices_input, [count])
        call c_f_pointer(p_output, indices_output, [count])
        call c_f_pointer(p_values, values, [count])
    end function spart_weights_arrays

    ! Multiply every entry by a factor of its input cell and of its output
    ! cell; each factor broadcasts against the weights' shape (optional).
    function spart_weights_scale(context, weights, factor_input, factor_output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_array), intent(in), optional, target :: factor_input, factor_output
        integer(c_int) :: status
        type(array_c), target :: view_input, view_output
        type(c_ptr) :: p_input, p_output
        p_input = c_null_ptr
        p_output = c_null_ptr
        if (present(factor_input)) then
            view_input = c_array(factor_input)
            p_input = c_loc(view_input)
        end if
        if (present(factor_output)) then
            view_output = c_array(factor_output)
            p_output = c_loc(view_output)
        end if
        status = c_spart_weights_scale(context%handle, weights%handle, p_input, p_output)
    end function spart_weights_scale

    ! The exact transpose, as regridding.transpose_weights.
    function spart_weights_transpose(context, weights, transposed) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_weights), intent(out) :: transposed
        integer(c_int) :: status
        status = c_spart_weights_transpose(context%handle, weights%handle, transposed%handle)
    end function spart_weights_transpose

    ! The conservative transpose, as regridding.transpose_weights_conservative,
    ! for the grids (and axes, weights_input) the weights were built with.
    function spart_weights_transpose_conservative(context, weights, coordinates_input, &
                                                  coordinates_output, transposed, axis_input, &
                                                  axis_output, weights_input) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_array), intent(in), target :: coordinates_input(:), coordinates_output(:)
        type(spart_weights), intent(out) :: transposed
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        type(spart_array), intent(in), optional, target :: weights_input
        integer(c_int) :: status
        type(weights_options_c) :: options
        type(array_c), target :: factor
        type(array_c) :: inputs(size(coordinates_input)), outputs(size(coordinates_input))
        status = grid_views(context, coordinates_input, coordinates_output, inputs, outputs)
        if (status /= SPART_OK) return
        status = weights_options(context, options, factor, axis_input=axis_input, &
                                 axis_output=axis_output, weights_input=weights_input)
        if (status /= SPART_OK) return
        status = c_spart_weights_transpose_conservative(context%handle, weights%handle, &
                                                        size(inputs, kind=c_int), inputs, &
                                                        outputs, options, transposed%handle)
    end function spart_weights_transpose_conservative

    ! Save weights to a FITS file (overwrite: default .false.).
    function spart_weights_save(context, weights, path, overwrite) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        character(len=*), intent(in) :: path
        logical, intent(in), optional :: overwrite
        integer(c_int) :: status
        integer(c_int) :: replace
        replace = 0
        if (present(overwrite)) replace = merge(1_c_int, 0_c_int, overwrite)
        status = c_spart_weights_save(context%handle, weights%handle, c_string(path), replace)
    end function spart_weights_save

    ! Load weights saved by spart_weights_save.
    function spart_weights_load(context, path, weights) result(status)
        type(spart_context), intent(in) :: context
        character(len=*), intent(in) :: path
        type(spart_weights), intent(out) :: weights
        integer(c_int) :: status
        status = c_spart_weights_load(context%handle, c_string(path), weights%handle)
    end function spart_weights_load

    ! Fold a kernel into the weights, as regridding.convolve_weights (C's
    ! spart_weights_convolve): `convolved` = P W, light spread past the
    ! grid's edge lost. kernel = spart_array_of(k), Fortran order: k's first
    ! dimensions are the kernel along the weights' resampled output
    ! dimensions (as many as they have), its centre at index floor(n / 2) + 1
    ! along each (1-based; an even n reaches n / 2 cells towards lower
    ! indices and n / 2 - 1 towards higher); its further dimensions
    ! broadcast against the output shape (per orthogonal element, or per
    ! output cell), as C's leading axes do.
    function spart_weights_convolve(context, weights, kernel, convolved) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_array), intent(in), target :: kernel
        type(spart_weights), intent(out) :: convolved
        integer(c_int) :: status
        if (allocated(kernel%dims)) then
            if (.not. fits_ndim(context, size(kernel%dims), 'kernel', status)) return
        end if
        status = c_spart_weights_convolve(context%handle, weights%handle, c_array(kernel), &
                                          convolved%handle)
    end function spart_weights_convolve

    ! ==== the Regridder (spart/regridder.h) ====================================================

    ! Fill C regridder options from the optional arguments, starting from
    ! the library's defaults.
    function regridder_options(context, options, shape_input, shape_output, axis_input, &
                               axis_output, value_type, drop_zeros) result(status)
        type(spart_context), intent(in) :: context
        type(regridder_options_c), intent(out) :: options
        integer(c_int64_t), intent(in), optional :: shape_input(:), shape_output(:)
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int), intent(in), optional :: value_type
        logical, intent(in), optional :: drop_zeros
        integer(c_int) :: status
        call c_spart_regridder_options_init(options)
        status = SPART_OK
        if (present(shape_input)) then
            if (.not. fits_ndim(context, size(shape_input), 'shape_input', status)) return
            options%has_shape_input = 1
            options%shape_input = c_shape(shape_input)
        end if
        if (present(shape_output)) then
            if (.not. fits_ndim(context, size(shape_output), 'shape_output', status)) return
            options%has_shape_output = 1
            options%shape_output = c_shape(shape_output)
        end if
        if (present(axis_input)) then
            if (.not. fits_ndim(context, size(axis_input), 'axis_input', status)) return
            options%num_axis_input = size(axis_input, kind=c_int)
            options%axis_input(1:size(axis_input)) = axis_input
        end if
        if (present(axis_output)) then
            if (.not. fits_ndim(context, size(axis_output), 'axis_output', status)) return
            options%num_axis_output = size(axis_output, kind=c_int)
            options%axis_output(1:size(axis_output)) = axis_output
        end if
        if (present(value_type)) options%value_type = value_type
        if (present(drop_zeros)) options%drop_zeros = merge(1_c_int, 0_c_int, drop_zeros)
    end function regridder_options

    ! Assemble a regridder from weights. Optional arguments as the fields of
    ! spart_regridder_options: shape_input and shape_output (Fortran order;
    ! absent: the weights' shapes with orthogonal axes broadcast), axis_input
    ! and axis_output (C axes), value_type (SPART_FLOAT64 or SPART_FLOAT32),
    ! drop_zeros.
    function spart_regridder_create(context, weights, regridder, shape_input, shape_output, &
                                    axis_input, axis_output, value_type, drop_zeros) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_regridder), intent(out) :: regridder
        integer(c_int64_t), intent(in), optional :: shape_input(:), shape_output(:)
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int), intent(in), optional :: value_type
        logical, intent(in), optional :: drop_zeros
        integer(c_int) :: status
        type(regridder_options_c) :: options
        status = regridder_options(context, options, shape_input, shape_output, axis_input, &
                                   axis_output, value_type, drop_zeros)
        if (status /= SPART_OK) return
        status = c_spart_regridder_create(context%handle, weights%handle, options, &
                                          regridder%handle)
    end function spart_regridder_create

    ! Free a regridder and the transposes it owns. Accepts a null handle;
    ! for a transpose, or an operator an instrument owns, it only nulls the
    ! handle.
    subroutine spart_regridder_free(regridder)
        type(spart_regridder), intent(inout) :: regridder
        if (regridder%owned) call c_spart_regridder_free(regridder%handle)
        regridder%handle = c_null_ptr
        regridder%owned = .true.
    end subroutine spart_regridder_free

    ! The shapes of the values it takes and gives, in Fortran order.
    pure function spart_regridder_shape_input(regridder) result(extents)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_regridder_shape_input(regridder%handle))
    end function spart_regridder_shape_input

    pure function spart_regridder_shape_output(regridder) result(extents)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_regridder_shape_output(regridder%handle))
    end function spart_regridder_shape_output

    pure function spart_regridder_num_rows(regridder) result(count)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t) :: count
        count = c_spart_regridder_num_rows(regridder%handle)
    end function spart_regridder_num_rows

    pure function spart_regridder_num_columns(regridder) result(count)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t) :: count
        count = c_spart_regridder_num_columns(regridder%handle)
    end function spart_regridder_num_columns

    pure function spart_regridder_num_entries(regridder) result(count)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t) :: count
        count = c_spart_regridder_num_entries(regridder%handle)
    end function spart_regridder_num_entries

    pure function spart_regridder_value_type(regridder) result(value_type)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int) :: value_type
        value_type = c_spart_regridder_value_type(regridder%handle)
    end function spart_regridder_value_type

    pure function spart_regridder_group_size(regridder) result(group_size)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int) :: group_size
        group_size = c_spart_regridder_group_size(regridder%handle)
    end function spart_regridder_group_size

    ! The CSR arrays as pointers into a host regridder: row_ptr (rows + 1
    ! 0-based positions), the column indices (0-based) in columns32 or
    ! columns64 (the other one null), the values in values (float64) or
    ! values32 (float32; the other one null). A device regridder's arrays
    ! are device memory: this fails for it (copy it with
    ! spart_regridder_to_host first).
    function spart_regridder_csr(regridder, row_ptr, columns32, columns64, values, values32) &
        result(status)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t), pointer, intent(out) :: row_ptr(:)
        integer(c_int32_t), pointer, intent(out) :: columns32(:)
        integer(c_int64_t), pointer, intent(out) :: columns64(:)
        real(c_double), pointer, intent(out) :: values(:)
        real(c_float), pointer, intent(out) :: values32(:)
        integer(c_int) :: status
        type(c_ptr) :: p_rows, p_columns32, p_columns64, p_values
        integer(c_int64_t) :: rows, entries
        type(spart_context) :: no_context
        nullify (row_ptr, columns32, columns64, values, values32)
        if (c_spart_regridder_cuda_device(regridder%handle) >= 0) then
            status = fail(no_context, SPART_ERROR_NOT_IMPLEMENTED, 'spart_regridder_csr: the '// &
                          'regridder is in device memory, which Fortran pointers cannot read; '// &
                          'copy it with spart_regridder_to_host first')
            return
        end if
        status = c_spart_regridder_csr(regridder%handle, p_rows, p_columns32, p_columns64, &
                                       p_values)
        if (status /= SPART_OK) return
        rows = c_spart_regridder_num_rows(regridder%handle)
        entries = c_spart_regridder_num_entries(regridder%handle)
        call c_f_pointer(p_rows, row_ptr, [rows + 1])
        if (c_associated(p_columns32)) call c_f_pointer(p_columns32, columns32, [entries])
        if (c_associated(p_columns64)) call c_f_pointer(p_columns64, columns64, [entries])
        if (c_spart_regridder_value_type(regridder%handle) == SPART_FLOAT32) then
            call c_f_pointer(p_values, values32, [entries])
        else
            call c_f_pointer(p_values, values, [entries])
        end if
    end function spart_regridder_csr

    ! The shape of y (Fortran order) for x of shape shape_x (Fortran order:
    ! the input shape followed by batch dimensions).
    function spart_regridder_apply_shape(context, regridder, shape_x, shape_y) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t), intent(in) :: shape_x(:)
        integer(c_int64_t), allocatable, intent(out) :: shape_y(:)
        integer(c_int) :: status
        type(shape_c) :: c_shape_y
        allocate (shape_y(0))
        if (.not. fits_ndim(context, size(shape_x), 'shape_x', status)) return
        status = c_spart_regridder_apply_shape(context%handle, regridder%handle, &
                                               c_shape(shape_x), c_shape_y)
        if (status == SPART_OK) shape_y = fortran_shape(c_shape_y)
    end function spart_regridder_apply_shape

    ! Bytes of workspace spart_regridder_apply needs for x of shape shape_x
    ! (Fortran order), to pass it a workspace of your own.
    function spart_regridder_workspace_size(context, regridder, shape_x, bytes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t), intent(in) :: shape_x(:)
        integer(c_size_t), intent(out) :: bytes
        integer(c_int) :: status
        bytes = 0
        if (.not. fits_ndim(context, size(shape_x), 'shape_x', status)) return
        status = c_spart_regridder_workspace_size(context%handle, regridder%handle, &
                                                  c_shape(shape_x), bytes)
    end function spart_regridder_workspace_size

    ! The C shape of x for a product. x's dimensions are the input shape
    ! (Fortran order) followed by batch dimensions; or the input shape
    ! without its dimensions of length 1 (axes the regridder broadcasts,
    ! as the channel axis of an instrument's scene), followed by batch
    ! dimensions; or one dimension of all the input values (flattened),
    ! followed by batch dimensions. Any other x is passed as it is, and the
    ! C library says what is wrong with it.
    function product_shape_x(regridder, extents) result(shape)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int64_t), intent(in) :: extents(:)
        type(shape_c) :: shape
        type(shape_c) :: input
        integer(c_int64_t) :: squeezed(SPART_MAX_NDIM)
        integer :: m, k, j, n
        logical :: matches
        input = c_spart_regridder_shape_input(regridder%handle)
        m = int(input%ndim)
        k = size(extents)
        shape = c_shape(extents)
        ! As it is: the C shape ends with the input shape.
        matches = k >= m .and. k <= SPART_MAX_NDIM
        do j = 1, m
            if (matches) matches = shape%dims(k - m + j) == input%dims(j)
        end do
        if (matches) return
        ! The input dimensions (Fortran order) without those of length 1.
        n = 0
        do j = m, 1, -1
            if (input%dims(j) /= 1) then
                n = n + 1
                squeezed(n) = input%dims(j)
            end if
        end do
        if (n < m .and. k >= n .and. k - n + m <= SPART_MAX_NDIM) then
            if (all(extents(1:n) == squeezed(1:n))) then
                shape = batch_then_input(extents(n + 1:k), input)
                return
            end if
        end if
        ! Flattened: one dimension of all the input values.
        if (m > 1 .and. k >= 1 .and. k - 1 + m <= SPART_MAX_NDIM) then
            if (extents(1) == product(input%dims(1:m))) then
                shape = batch_then_input(extents(2:k), input)
            end if
        end if
    end function product_shape_x

    ! The C shape of batch dimensions (Fortran order) followed by a C input
    ! shape: the batch axes reversed, leading.
    pure function batch_then_input(batch, input) result(shape)
        integer(c_int64_t), intent(in) :: batch(:)
        type(shape_c), intent(in) :: input
        type(shape_c) :: shape
        integer :: b, j
        b = size(batch)
        shape%ndim = int(b, c_int) + input%ndim
        shape%dims = 0
        do j = 1, b
            shape%dims(j) = batch(b + 1 - j)
        end do
        shape%dims(b + 1:b + input%ndim) = input%dims(1:input%ndim)
    end function batch_then_input

    ! The product on located arrays: every rank-specific
    ! spart_regridder_apply comes here.
    function apply_located(context, regridder, x, extents_x, y, size_y, workspace) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        type(c_ptr), intent(in) :: x, y
        integer(c_int64_t), intent(in) :: extents_x(:), size_y
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(array_c) :: view
        real(c_double), target :: nothing(1)
        type(c_ptr) :: y_or_nothing, workspace_pointer
        ! The C library wants a y even for no values: give it a place.
        y_or_nothing = y
        if (.not. c_associated(y)) y_or_nothing = c_loc(nothing)
        view%data = x
        view%shape = product_shape_x(regridder, extents_x)
        if (present(workspace)) then
            workspace_pointer = c_loc(nothing)
            if (size(workspace) > 0) workspace_pointer = c_loc(workspace)
            status = c_spart_regridder_apply_workspace(context%handle, regridder%handle, view, &
                                                       y_or_nothing, size_y, workspace_pointer, &
                                                       int(size(workspace), c_size_t)*8_c_size_t)
        else
            status = c_spart_regridder_apply(context%handle, regridder%handle, view, &
                                             y_or_nothing, size_y)
        end if
    end function apply_located

    ! y = A x on arrays in any memory (device memory included, from CUDA
    ! Fortran or OpenACC's host_data use_device), by address: x holds
    ! values of shape shape_x (Fortran order), y size_y values; workspace
    ! (optional) workspace_bytes bytes.
    function spart_regridder_apply_pointer(context, regridder, x, shape_x, y, size_y, &
                                           workspace, workspace_bytes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        type(c_ptr), intent(in) :: x, y
        integer(c_int64_t), intent(in) :: shape_x(:), size_y
        type(c_ptr), intent(in), optional :: workspace
        integer(c_size_t), intent(in), optional :: workspace_bytes
        integer(c_int) :: status
        type(array_c) :: view
        if (.not. fits_ndim(context, size(shape_x), 'shape_x', status)) return
        view%data = x
        view%shape = c_shape(shape_x)
        if (present(workspace) .and. present(workspace_bytes)) then
            status = c_spart_regridder_apply_workspace(context%handle, regridder%handle, view, y, &
                                                       size_y, workspace, workspace_bytes)
        else
            status = c_spart_regridder_apply(context%handle, regridder%handle, view, y, size_y)
        end if
    end function spart_regridder_apply_pointer

    ! The exact transpose (built on the first call and kept by `regridder`,
    ! which owns it: freeing `transposed` only nulls the handle).
    function spart_regridder_transpose(context, regridder, transposed) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        type(spart_regridder), intent(out) :: transposed
        integer(c_int) :: status
        status = c_spart_regridder_transpose(context%handle, regridder%handle, transposed%handle)
    end function spart_regridder_transpose

    ! The conservative transpose for the grids (and axes, weights_input) the
    ! weights were built with; kept by `regridder`, as the exact transpose.
    function spart_regridder_transpose_conservative(context, regridder, coordinates_input, &
                                                    coordinates_output, transposed, axis_input, &
                                                    axis_output, weights_input) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        type(spart_array), intent(in), target :: coordinates_input(:), coordinates_output(:)
        type(spart_regridder), intent(out) :: transposed
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        type(spart_array), intent(in), optional, target :: weights_input
        integer(c_int) :: status
        type(weights_options_c) :: options
        type(array_c), target :: factor
        type(array_c) :: inputs(size(coordinates_input)), outputs(size(coordinates_input))
        status = grid_views(context, coordinates_input, coordinates_output, inputs, outputs)
        if (status /= SPART_OK) return
        status = weights_options(context, options, factor, axis_input=axis_input, &
                                 axis_output=axis_output, weights_input=weights_input)
        if (status /= SPART_OK) return
        status = c_spart_regridder_transpose_conservative(context%handle, regridder%handle, &
                                                          size(inputs, kind=c_int), inputs, &
                                                          outputs, options, transposed%handle)
    end function spart_regridder_transpose_conservative

    ! Save a regridder to a FITS file (overwrite: default .false.).
    function spart_regridder_save(context, regridder, path, overwrite) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        character(len=*), intent(in) :: path
        logical, intent(in), optional :: overwrite
        integer(c_int) :: status
        integer(c_int) :: replace
        replace = 0
        if (present(overwrite)) replace = merge(1_c_int, 0_c_int, overwrite)
        status = c_spart_regridder_save(context%handle, regridder%handle, c_string(path), replace)
    end function spart_regridder_save

    ! Load a regridder saved by spart_regridder_save.
    function spart_regridder_load(context, path, regridder) result(status)
        type(spart_context), intent(in) :: context
        character(len=*), intent(in) :: path
        type(spart_regridder), intent(out) :: regridder
        integer(c_int) :: status
        status = c_spart_regridder_load(context%handle, c_string(path), regridder%handle)
    end function spart_regridder_load

    ! ==== the device (spart/device.h) ==========================================================

    function spart_context_set_cuda_device(context, device) result(status)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: device
        integer(c_int) :: status
        status = c_spart_context_set_cuda_device(context%handle, device)
    end function spart_context_set_cuda_device

    ! stream: a cudaStream_t (c_null_ptr: the default stream).
    function spart_context_set_cuda_stream(context, stream) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: stream
        integer(c_int) :: status
        status = c_spart_context_set_cuda_stream(context%handle, stream)
    end function spart_context_set_cuda_stream

    ! Assemble a regridder from weights, as spart_regridder_create (the same
    ! optional arguments), with its matrix in the memory of the context's
    ! CUDA device. Its products take device memory: use
    ! spart_regridder_apply_pointer.
    function spart_regridder_create_device(context, weights, regridder, shape_input, &
                                           shape_output, axis_input, axis_output, value_type, &
                                           drop_zeros) result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_regridder), intent(out) :: regridder
        integer(c_int64_t), intent(in), optional :: shape_input(:), shape_output(:)
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int), intent(in), optional :: value_type
        logical, intent(in), optional :: drop_zeros
        integer(c_int) :: status
        type(regridder_options_c) :: options
        status = regridder_options(context, options, shape_input, shape_output, axis_input, &
                                   axis_output, value_type, drop_zeros)
        if (status /= SPART_OK) return
        status = c_spart_regridder_create_device(context%handle, weights%handle, options, &
                                                 regridder%handle)
    end function spart_regridder_create_device

    ! Fold `kernel` into the weights and assemble the result, both on the
    ! context's CUDA device (C's spart_regridder_create_device_convolved):
    ! the regridder spart_regridder_create_device would build from
    ! spart_weights_convolve(weights, kernel), the same matrix bit for bit,
    ! without the convolved weights ever in host memory. kernel as
    ! spart_weights_convolve reads it; the optional arguments as
    ! spart_regridder_create's, for the convolved weights' shapes.
    function spart_regridder_create_device_convolved(context, weights, kernel, regridder, &
                                                     shape_input, shape_output, axis_input, &
                                                     axis_output, value_type, drop_zeros) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(in) :: weights
        type(spart_array), intent(in), target :: kernel
        type(spart_regridder), intent(out) :: regridder
        integer(c_int64_t), intent(in), optional :: shape_input(:), shape_output(:)
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int), intent(in), optional :: value_type
        logical, intent(in), optional :: drop_zeros
        integer(c_int) :: status
        type(regridder_options_c) :: options
        if (allocated(kernel%dims)) then
            if (.not. fits_ndim(context, size(kernel%dims), 'kernel', status)) return
        end if
        status = regridder_options(context, options, shape_input, shape_output, axis_input, &
                                   axis_output, value_type, drop_zeros)
        if (status /= SPART_OK) return
        status = c_spart_regridder_create_device_convolved(context%handle, weights%handle, &
                                                           c_array(kernel), options, &
                                                           regridder%handle)
    end function spart_regridder_create_device_convolved

    ! A regridder assembled on the context's CUDA device from weights whose
    ! entries are already in that device's memory (C's
    ! spart_regridder_create_device_from_arrays), without a trip through
    ! host memory: the regridder spart_regridder_create_device builds from
    ! spart_weights_create_from_arrays of the same numbers, bit for bit.
    ! indices_input, indices_output (int64, C flat indices) and values
    ! (float64) are device addresses (spart_device_malloc) of
    ! offsets(size(offsets)) entries each: read in place, never written or
    ! freed, and checked on the device. The rest as
    ! spart_weights_create_from_arrays: shapes in Fortran order, offsets on
    ! the host, axis_input and axis_output the weights' resampled C axes.
    ! The regridder's options as spart_regridder_create's: value_type,
    ! drop_zeros, and values_shape_input, values_shape_output,
    ! values_axis_input, values_axis_output (its shape_input, shape_output,
    ! axis_input and axis_output, renamed here since the weights' own
    ! arguments have those names).
    function spart_regridder_create_device_from_arrays_pointer(context, shape_orthogonal, &
                                                               shape_input, shape_output, &
                                                               offsets, indices_input, &
                                                               indices_output, values, &
                                                               regridder, axis_input, &
                                                               axis_output, values_shape_input, &
                                                               values_shape_output, &
                                                               values_axis_input, &
                                                               values_axis_output, value_type, &
                                                               drop_zeros) result(status)
        type(spart_context), intent(in) :: context
        integer(c_int64_t), intent(in) :: shape_orthogonal(:), shape_input(:), shape_output(:)
        integer(c_int64_t), intent(in) :: offsets(:)
        type(c_ptr), intent(in) :: indices_input, indices_output, values
        type(spart_regridder), intent(out) :: regridder
        integer(c_int), intent(in), optional :: axis_input(:), axis_output(:)
        integer(c_int64_t), intent(in), optional :: values_shape_input(:), values_shape_output(:)
        integer(c_int), intent(in), optional :: values_axis_input(:), values_axis_output(:)
        integer(c_int), intent(in), optional :: value_type
        logical, intent(in), optional :: drop_zeros
        integer(c_int) :: status
        integer(c_int) :: axes_in(SPART_MAX_NDIM), axes_out(SPART_MAX_NDIM)
        integer(c_int) :: num_in, num_out
        type(regridder_options_c) :: options
        status = weights_layout(context, shape_orthogonal, shape_input, shape_output, offsets, &
                                axes_in, num_in, axes_out, num_out, axis_input, axis_output)
        if (status /= SPART_OK) return
        status = regridder_options(context, options, values_shape_input, values_shape_output, &
                                   values_axis_input, values_axis_output, value_type, drop_zeros)
        if (status /= SPART_OK) return
        status = c_spart_regridder_create_device_from_arrays( &
                 context%handle, c_shape(shape_orthogonal), c_shape(shape_input), &
                 c_shape(shape_output), num_in, axes_in, num_out, axes_out, offsets, &
                 indices_input, indices_output, values, options, regridder%handle)
    end function spart_regridder_create_device_from_arrays_pointer

    ! A copy of the regridder in the memory of the context's CUDA device. Its
    ! products take device memory: use spart_regridder_apply_pointer.
    function spart_regridder_to_device(context, regridder, device) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        type(spart_regridder), intent(out) :: device
        integer(c_int) :: status
        status = c_spart_regridder_to_device(context%handle, regridder%handle, device%handle)
    end function spart_regridder_to_device

    function spart_regridder_to_host(context, regridder, host) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        type(spart_regridder), intent(out) :: host
        integer(c_int) :: status
        status = c_spart_regridder_to_host(context%handle, regridder%handle, host%handle)
    end function spart_regridder_to_host

    ! The CUDA device holding the regridder's matrix, -1 for host memory.
    pure function spart_regridder_cuda_device(regridder) result(device)
        type(spart_regridder), intent(in) :: regridder
        integer(c_int) :: device
        device = c_spart_regridder_cuda_device(regridder%handle)
    end function spart_regridder_cuda_device

    ! ==== MART (spart/mart.h) ==================================================================

    ! Fill `operators` to run on `pair` (declared TARGET, kept while the
    ! operators are used).
    function spart_mart_operators_from_regridders(context, pair, operators) result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_regridder_pair), intent(in), target :: pair
        type(spart_mart_operators), intent(out) :: operators
        integer(c_int) :: status
        operators%on_device = 0
        operators%capturable = 0
        status = c_spart_mart_operators_from_regridders(context%handle, c_loc(pair), operators)
    end function spart_mart_operators_from_regridders

    ! C MART options from the optional arguments (the guess apart),
    ! starting from the library's defaults.
    subroutine mart_options(options, gamma, stop_rule, threshold, target, max_iterations, &
                            keep_intermediate, callback, callback_user)
        type(mart_options_c), intent(out) :: options
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        call c_spart_mart_options_init(options)
        if (present(gamma)) options%gamma = gamma
        if (present(stop_rule)) options%stop_rule = stop_rule
        if (present(threshold)) options%threshold = threshold
        if (present(target)) options%target = target
        if (present(max_iterations)) options%max_iterations = max_iterations
        if (present(keep_intermediate)) then
            options%keep_intermediate = merge(1_c_int, 0_c_int, keep_intermediate)
        end if
        if (present(callback)) options%callback = c_funloc(callback)
        if (present(callback_user)) options%callback_user = callback_user
    end subroutine mart_options

    ! MART on located observed images in host memory: every rank-specific
    ! spart_mart_solve comes here. Optional arguments as the fields of
    ! spart_mart_options.
    function mart_solve_located(context, operators, observed, size_observed, result, gamma, &
                                stop_rule, threshold, target, max_iterations, &
                                keep_intermediate, guess, callback, callback_user) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_operators), intent(in) :: operators
        type(c_ptr), intent(in) :: observed
        integer(c_int64_t), intent(in) :: size_observed
        type(spart_mart_result), intent(out) :: result
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        real(c_double), intent(in), optional, target, contiguous :: guess(:)
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        integer(c_int) :: status
        type(mart_options_c) :: options
        if (operators%on_device /= 0) then
            status = fail(context, SPART_ERROR_INVALID_ARGUMENT, 'mart: the operators work on '// &
                          'device memory, so observed and guess must be device memory too: '// &
                          'pass their addresses to spart_mart_solve_pointer')
            return
        end if
        ! The C driver reads num_channel x image_size observed values and
        ! scene_size guess values through bare pointers: check the sizes it
        ! cannot see.
        if (size_observed /= operators%num_channel*operators%image_size) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'mart: observed holds '// &
                          text_of(size_observed)//' values, but the operators take '// &
                          text_of(operators%num_channel)//' channels x '// &
                          text_of(operators%image_size)//' values per image = '// &
                          text_of(operators%num_channel*operators%image_size))
            return
        end if
        call mart_options(options, gamma, stop_rule, threshold, target, max_iterations, &
                          keep_intermediate, callback, callback_user)
        if (present(guess)) then
            if (size(guess, kind=c_int64_t) /= operators%scene_size) then
                status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'mart: guess holds '// &
                              text_of(size(guess, kind=c_int64_t))// &
                              ' values, but a scene of the operators holds '// &
                              text_of(operators%scene_size))
                return
            end if
            if (size(guess) > 0) options%guess = c_loc(guess)
        end if
        status = c_spart_mart_solve(context%handle, operators, observed, options, result%handle)
    end function mart_solve_located

    ! MART with observed (num_channel x image_size values) and guess
    ! (optional, scene_size values) by address: host memory (c_loc of TARGET
    ! arrays) for host operators, device memory for device operators (those
    ! of device regridders). Their sizes are yours to get right. The other
    ! optional arguments as for spart_mart_solve.
    function spart_mart_solve_pointer(context, operators, observed, result, gamma, stop_rule, &
                                      threshold, target, max_iterations, keep_intermediate, &
                                      guess, callback, callback_user) result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_operators), intent(in) :: operators
        type(c_ptr), intent(in) :: observed
        type(spart_mart_result), intent(out) :: result
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        type(c_ptr), intent(in), optional :: guess
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        integer(c_int) :: status
        type(mart_options_c) :: options
        call mart_options(options, gamma, stop_rule, threshold, target, max_iterations, &
                          keep_intermediate, callback, callback_user)
        if (present(guess)) options%guess = guess
        status = c_spart_mart_solve(context%handle, operators, observed, options, result%handle)
    end function spart_mart_solve_pointer

    ! Free a MART result. Accepts a null handle.
    subroutine spart_mart_result_free(result)
        type(spart_mart_result), intent(inout) :: result
        call c_spart_mart_result_free(result%handle)
        result%handle = c_null_ptr
    end subroutine spart_mart_result_free

    pure function spart_mart_result_num_iterations(result) result(count)
        type(spart_mart_result), intent(in) :: result
        integer(c_int64_t) :: count
        count = c_spart_mart_result_num_iterations(result%handle)
    end function spart_mart_result_num_iterations

    ! Whether the run met its stopping rule.
    pure function spart_mart_result_success(result) result(success)
        type(spart_mart_result), intent(in) :: result
        logical :: success
        success = c_spart_mart_result_success(result%handle) /= 0
    end function spart_mart_result_success

    function spart_mart_result_message(result) result(message)
        type(spart_mart_result), intent(in) :: result
        character(len=:), allocatable :: message
        message = spart_string_from_c(c_spart_mart_result_message(result%handle))
    end function spart_mart_result_message

    pure function spart_mart_result_gamma(result) result(gamma)
        type(spart_mart_result), intent(in) :: result
        real(c_double) :: gamma
        gamma = c_spart_mart_result_gamma(result%handle)
    end function spart_mart_result_gamma

    pure function spart_mart_result_num_channel(result) result(count)
        type(spart_mart_result), intent(in) :: result
        integer(c_int64_t) :: count
        count = c_spart_mart_result_num_channel(result%handle)
    end function spart_mart_result_num_channel

    pure function spart_mart_result_scene_size(result) result(count)
        type(spart_mart_result), intent(in) :: result
        integer(c_int64_t) :: count
        count = c_spart_mart_result_scene_size(result%handle)
    end function spart_mart_result_scene_size

    ! The solution (scene_size values) as a pointer into the result.
    function spart_mart_result_solution(result) result(values)
        type(spart_mart_result), intent(in) :: result
        real(c_double), pointer :: values(:)
        nullify (values)
        if (.not. c_associated(result%handle)) return
        call c_f_pointer(c_spart_mart_result_solution(result%handle), values, &
                         [c_spart_mart_result_scene_size(result%handle)])
    end function spart_mart_result_solution

    pure function spart_mart_result_num_solutions(result) result(count)
        type(spart_mart_result), intent(in) :: result
        integer(c_int64_t) :: count
        count = c_spart_mart_result_num_solutions(result%handle)
    end function spart_mart_result_num_solutions

    ! Kept state k (0-based: the state at the start of iteration k), or a
    ! null pointer for k out of range.
    function spart_mart_result_solutions(result, k) result(values)
        type(spart_mart_result), intent(in) :: result
        integer(c_int64_t), intent(in) :: k
        real(c_double), pointer :: values(:)
        type(c_ptr) :: state
        nullify (values)
        if (.not. c_associated(result%handle)) return
        state = c_spart_mart_result_solutions(result%handle, k)
        if (c_associated(state)) then
            call c_f_pointer(state, values, [c_spart_mart_result_scene_size(result%handle)])
        end if
    end function spart_mart_result_solutions

    ! The histories as pointers of shape (num_channel, num_iterations): the
    ! C arrays [num_iterations][num_channel], so history(c, i) is channel c
    ! at iteration i - 1.
    function spart_mart_result_mean_chi_squared(result) result(values)
        type(spart_mart_result), intent(in) :: result
        real(c_double), pointer :: values(:, :)
        nullify (values)
        if (.not. c_associated(result%handle)) return
        call c_f_pointer(c_spart_mart_result_mean_chi_squared(result%handle), values, &
                         [c_spart_mart_result_num_channel(result%handle), &
                          c_spart_mart_result_num_iterations(result%handle)])
    end function spart_mart_result_mean_chi_squared

    function spart_mart_result_correlation(result) result(values)
        type(spart_mart_result), intent(in) :: result
        real(c_double), pointer :: values(:, :)
        nullify (values)
        if (.not. c_associated(result%handle)) return
        call c_f_pointer(c_spart_mart_result_correlation(result%handle), values, &
                         [c_spart_mart_result_num_channel(result%handle), &
                          c_spart_mart_result_num_iterations(result%handle)])
    end function spart_mart_result_correlation

    ! ---- MART building blocks (spart/mart.h), by address ---------------------------------------
    ! For your own iteration. The arrays are passed by address (c_loc of a
    ! contiguous array with the TARGET attribute, or device memory from
    ! spart_device_malloc with on_device = .true.), as the C functions take
    ! them: their sizes are yours to get right. on_device: default .false.

    ! Bytes of workspace spart_mart_merits and spart_mart_flat_guess need.
    pure function spart_mart_workspace_size(num_channel, image_size, scene_size) result(bytes)
        integer(c_int64_t), intent(in) :: num_channel, image_size, scene_size
        integer(c_size_t) :: bytes
        bytes = c_spart_mart_workspace_size(num_channel, image_size, scene_size)
    end function spart_mart_workspace_size

    ! 1 for on_device = .true., else 0.
    pure function device_flag(on_device) result(flag)
        logical, intent(in), optional :: on_device
        integer(c_int) :: flag
        flag = 0
        if (present(on_device)) flag = merge(1_c_int, 0_c_int, on_device)
    end function device_flag

    ! values = max(values, 0) for n values, in place.
    function spart_mart_clamp(context, values, n, on_device) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: values
        integer(c_int64_t), intent(in) :: n
        logical, intent(in), optional :: on_device
        integer(c_int) :: status
        status = c_spart_mart_clamp(context%handle, values, n, device_flag(on_device))
    end function spart_mart_clamp

    ! Predicted counts clamped at 0 in place, and their noise widths.
    function spart_mart_noise_widths(context, images, widths, n, gain, read_noise, on_device) &
        result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: images, widths
        integer(c_int64_t), intent(in) :: n
        real(c_double), intent(in) :: gain, read_noise
        logical, intent(in), optional :: on_device
        integer(c_int) :: status
        status = c_spart_mart_noise_widths(context%handle, images, widths, n, gain, read_noise, &
                                           device_flag(on_device))
    end function spart_mart_noise_widths

    ! The mean chi-squared and the correlation of residuals per channel,
    ! into chi2 and correlation (host arrays of num_channel values, checked).
    function spart_mart_merits(context, observed, predicted, widths, num_channel, image_size, &
                               chi2, correlation, workspace, workspace_bytes, on_device) &
        result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: observed, predicted, widths, workspace
        integer(c_int64_t), intent(in) :: num_channel, image_size
        real(c_double), intent(inout) :: chi2(:), correlation(:)
        integer(c_size_t), intent(in) :: workspace_bytes
        logical, intent(in), optional :: on_device
        integer(c_int) :: status
        if (size(chi2, kind=c_int64_t) /= num_channel .or. &
            size(correlation, kind=c_int64_t) /= num_channel) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'mart merits: chi2 and '// &
                          'correlation hold '//text_of(size(chi2, kind=c_int64_t))//' and '// &
                          text_of(size(correlation, kind=c_int64_t))//' values for '// &
                          text_of(num_channel)//' channels')
            return
        end if
        status = c_spart_mart_merits(context%handle, observed, predicted, widths, num_channel, &
                                     image_size, chi2, correlation, workspace, workspace_bytes, &
                                     device_flag(on_device))
    end function spart_mart_merits

    ! The flat guess from the backprojection (num_channel x scene_size).
    function spart_mart_flat_guess(context, backprojected, num_channel, scene_size, scene, &
                                   workspace, workspace_bytes, on_device) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: backprojected, scene, workspace
        integer(c_int64_t), intent(in) :: num_channel, scene_size
        integer(c_size_t), intent(in) :: workspace_bytes
        logical, intent(in), optional :: on_device
        integer(c_int) :: status
        status = c_spart_mart_flat_guess(context%handle, backprojected, num_channel, scene_size, &
                                         scene, workspace, workspace_bytes, &
                                         device_flag(on_device))
    end function spart_mart_flat_guess

    ! scene *= the MART correction from the two backprojections.
    function spart_mart_update(context, scene, observed_back, predicted_back, num_channel, &
                               scene_size, gamma, on_device) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: scene, observed_back, predicted_back
        integer(c_int64_t), intent(in) :: num_channel, scene_size
        real(c_double), intent(in) :: gamma
        logical, intent(in), optional :: on_device
        integer(c_int) :: status
        status = c_spart_mart_update(context%handle, scene, observed_back, predicted_back, &
                                     num_channel, scene_size, gamma, device_flag(on_device))
    end function spart_mart_update

    ! Backproject `images` with `backward` and multiply `scene` by the MART
    ! correction, as spart_regridder_apply then spart_mart_update (one pass
    ! on a device); arrays by address, where `backward` lives.
    function spart_mart_update_from_images(context, backward, images, observed_back, &
                                           num_channel, gamma, scene, predicted_back) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: backward
        type(c_ptr), intent(in) :: images, observed_back, scene, predicted_back
        integer(c_int64_t), intent(in) :: num_channel
        real(c_double), intent(in) :: gamma
        integer(c_int) :: status
        status = c_spart_mart_update_from_images(context%handle, backward%handle, images, &
                                                 observed_back, num_channel, gamma, scene, &
                                                 predicted_back)
    end function spart_mart_update_from_images

    ! ==== device memory (spart/device_memory.h), by address ===================================

    ! `bytes` bytes of the context's CUDA device, at `pointer`.
    function spart_device_malloc(context, bytes, pointer) result(status)
        type(spart_context), intent(in) :: context
        integer(c_size_t), intent(in) :: bytes
        type(c_ptr), intent(out) :: pointer
        integer(c_int) :: status
        pointer = c_null_ptr
        status = c_spart_device_malloc(context%handle, bytes, pointer)
    end function spart_device_malloc

    ! Free memory of spart_device_malloc (and null the pointer).
    subroutine spart_device_free(context, pointer)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(inout) :: pointer
        call c_spart_device_free(context%handle, pointer)
        pointer = c_null_ptr
    end subroutine spart_device_free

    ! Copies of `bytes` bytes (host addresses: c_loc of TARGET arrays), on
    ! the context's stream, waited for.
    function spart_device_copy_to_device(context, device, host, bytes) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: device, host
        integer(c_size_t), intent(in) :: bytes
        integer(c_int) :: status
        status = c_spart_device_copy_to_device(context%handle, device, host, bytes)
    end function spart_device_copy_to_device

    function spart_device_copy_to_host(context, host, device, bytes) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: host, device
        integer(c_size_t), intent(in) :: bytes
        integer(c_int) :: status
        status = c_spart_device_copy_to_host(context%handle, host, device, bytes)
    end function spart_device_copy_to_host

    function spart_device_copy_on_device(context, to, from, bytes) result(status)
        type(spart_context), intent(in) :: context
        type(c_ptr), intent(in) :: to, from
        integer(c_size_t), intent(in) :: bytes
        integer(c_int) :: status
        status = c_spart_device_copy_on_device(context%handle, to, from, bytes)
    end function spart_device_copy_on_device

    ! ==== the ideal instrument (spart/instrument.h) ============================================

    ! Build an ideal instrument. The counts come from the arrays: angle
    ! holds one angle per channel, wavelength, scene_x, scene_y, sensor_x and
    ! sensor_y hold vertices (one more than the bins, cells or pixels).
    ! Optional: quantum_yield (default 1), read_noise (0),
    ! solid_angle_steradian (.false.), value_type (SPART_FLOAT64), psf and
    ! psf_mode (SPART_PSF_AUTO): one kernel per channel, psf(ky, kx,
    ! num_channel) along sensor y then x (C's [channel][x][y]), centre at
    ! index floor(n / 2) + 1 along each (spart/instrument.h).
    function spart_instrument_create(context, instrument, angle, dispersion, plate_scale, &
                                     wavelength_ref, position_ref, area_effective, exposure_time, &
                                     wavelength, scene_x, scene_y, sensor_x, sensor_y, &
                                     quantum_yield, read_noise, solid_angle_steradian, &
                                     value_type, psf, psf_mode) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(out) :: instrument
        real(c_double), intent(in), target, contiguous :: angle(:)
        real(c_double), intent(in) :: dispersion, plate_scale, wavelength_ref
        real(c_double), intent(in) :: position_ref(2)
        real(c_double), intent(in) :: area_effective, exposure_time
        real(c_double), intent(in), target, contiguous :: wavelength(:), scene_x(:), scene_y(:)
        real(c_double), intent(in), target, contiguous :: sensor_x(:), sensor_y(:)
        real(c_double), intent(in), optional :: quantum_yield, read_noise
        logical, intent(in), optional :: solid_angle_steradian
        integer(c_int), intent(in), optional :: value_type
        real(c_double), intent(in), optional, target, contiguous :: psf(:, :, :)
        integer(c_int), intent(in), optional :: psf_mode
        integer(c_int) :: status
        type(instrument_params_c) :: params
        call c_spart_instrument_params_init(params)
        ! The C function reads num_channel kernels through a bare pointer:
        ! check what it cannot see.
        if (present(psf)) then
            if (size(psf) == 0 .or. size(psf, 3) /= size(angle)) then
                status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'psf has shape ('// &
                              text_of(size(psf, 1, c_int64_t))//', '// &
                              text_of(size(psf, 2, c_int64_t))//', '// &
                              text_of(size(psf, 3, c_int64_t))//'), but it needs (ky, kx, '// &
                              'num_channel) with num_channel = '// &
                              text_of(size(angle, kind=c_int64_t))//' and ky, kx >= 1')
                return
            end if
            params%psf = c_loc(psf)
            params%psf_size = [size(psf, 2, c_int64_t), size(psf, 1, c_int64_t)]
        end if
        if (present(psf_mode)) params%psf_mode = psf_mode
        params%num_channel = size(angle, kind=c_int64_t)
        if (size(angle) > 0) params%angle = c_loc(angle)
        params%dispersion = dispersion
        params%plate_scale = plate_scale
        params%wavelength_ref = wavelength_ref
        params%position_ref = position_ref
        params%area_effective = area_effective
        params%exposure_time = exposure_time
        params%num_wavelength = size(wavelength, kind=c_int64_t) - 1
        if (size(wavelength) > 0) params%wavelength = c_loc(wavelength)
        params%num_scene_x = size(scene_x, kind=c_int64_t) - 1
        if (size(scene_x) > 0) params%scene_x = c_loc(scene_x)
        params%num_scene_y = size(scene_y, kind=c_int64_t) - 1
        if (size(scene_y) > 0) params%scene_y = c_loc(scene_y)
        params%num_sensor_x = size(sensor_x, kind=c_int64_t) - 1
        if (size(sensor_x) > 0) params%sensor_x = c_loc(sensor_x)
        params%num_sensor_y = size(sensor_y, kind=c_int64_t) - 1
        if (size(sensor_y) > 0) params%sensor_y = c_loc(sensor_y)
        if (present(quantum_yield)) params%quantum_yield = quantum_yield
        if (present(read_noise)) params%read_noise = read_noise
        if (present(solid_angle_steradian)) then
            params%solid_angle_steradian = merge(1_c_int, 0_c_int, solid_angle_steradian)
        end if
        if (present(value_type)) params%value_type = value_type
        status = c_spart_instrument_create(context%handle, params, instrument%handle)
    end function spart_instrument_create

    ! Free an instrument and its operators. Accepts a null handle.
    subroutine spart_instrument_free(instrument)
        type(spart_instrument), intent(inout) :: instrument
        call c_spart_instrument_free(instrument%handle)
        instrument%handle = c_null_ptr
    end subroutine spart_instrument_free

    pure function spart_instrument_num_channel(instrument) result(count)
        type(spart_instrument), intent(in) :: instrument
        integer(c_int64_t) :: count
        count = c_spart_instrument_num_channel(instrument%handle)
    end function spart_instrument_num_channel

    pure function spart_instrument_scene_size(instrument) result(count)
        type(spart_instrument), intent(in) :: instrument
        integer(c_int64_t) :: count
        count = c_spart_instrument_scene_size(instrument%handle)
    end function spart_instrument_scene_size

    pure function spart_instrument_image_size(instrument) result(count)
        type(spart_instrument), intent(in) :: instrument
        integer(c_int64_t) :: count
        count = c_spart_instrument_image_size(instrument%handle)
    end function spart_instrument_image_size

    ! The forward operator (scene to images) and the backprojection, owned
    ! by the instrument (spart_regridder_free on them only nulls them).
    function spart_instrument_forward(instrument) result(regridder)
        type(spart_instrument), intent(in) :: instrument
        type(spart_regridder) :: regridder
        regridder%handle = c_spart_instrument_forward(instrument%handle)
        regridder%owned = .false.
    end function spart_instrument_forward

    function spart_instrument_backward(instrument) result(regridder)
        type(spart_instrument), intent(in) :: instrument
        type(spart_regridder) :: regridder
        regridder%handle = c_spart_instrument_backward(instrument%handle)
        regridder%owned = .false.
    end function spart_instrument_backward

    ! The PSF composed by FFT after the forward operator, owned by the
    ! instrument (spart_psf_free on it only nulls it); a null handle when
    ! there is none or it is folded into the weights.
    function spart_instrument_psf(instrument) result(psf)
        type(spart_instrument), intent(in) :: instrument
        type(spart_psf) :: psf
        psf%handle = c_spart_instrument_psf(instrument%handle)
        psf%owned = .false.
    end function spart_instrument_psf

    ! Photons per unit radiance of each scene voxel, a pointer of the
    ! scene's shape (num_scene_y, num_scene_x, num_wavelength).
    function spart_instrument_photons_per_radiance(instrument) result(values)
        type(spart_instrument), intent(in) :: instrument
        real(c_double), pointer :: values(:, :, :)
        type(shape_c) :: scene
        integer :: n
        nullify (values)
        if (c_associated(instrument%handle)) then
            ! The forward operator's input is the scene, [wavelength][x][y],
            ! after the axes it broadcasts.
            scene = c_spart_regridder_shape_input(c_spart_instrument_forward(instrument%handle))
            n = int(scene%ndim)
            if (n >= 3) then
                call c_f_pointer(c_spart_instrument_photons_per_radiance(instrument%handle), &
                                 values, scene%dims(n:n - 2:-1))
            end if
        end if
    end function spart_instrument_photons_per_radiance

    ! Check that an array holds `expected` values, for the C functions that
    ! read and write bare pointers.
    function size_matches(context, what, actual, expected, status) result(matches)
        type(spart_context), intent(in) :: context
        character(len=*), intent(in) :: what
        integer(c_int64_t), intent(in) :: actual, expected
        integer(c_int), intent(inout) :: status
        logical :: matches
        matches = actual == expected
        if (.not. matches) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, what//' holds '// &
                          text_of(actual)//' values, but the instrument needs '//text_of(expected))
        end if
    end function size_matches

    ! The instrument's products on located arrays (sizes checked).
    function instrument_image_located(context, instrument, scene, size_scene, images, &
                                      size_images, widths, size_widths, observe, seed) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        type(c_ptr), intent(in) :: scene, images, widths
        integer(c_int64_t), intent(in) :: size_scene, size_images, size_widths
        logical, intent(in) :: observe
        integer(c_int64_t), intent(in) :: seed
        integer(c_int) :: status
        integer(c_int64_t) :: image_values
        status = SPART_OK
        if (.not. c_associated(instrument%handle)) then
            status = c_spart_instrument_image(context%handle, instrument%handle, scene, images, &
                                              widths)
            return
        end if
        image_values = c_spart_instrument_num_channel(instrument%handle)* &
                       c_spart_instrument_image_size(instrument%handle)
        if (.not. size_matches(context, 'scene', size_scene, &
                               c_spart_instrument_scene_size(instrument%handle), status)) return
        if (.not. size_matches(context, 'images', size_images, image_values, status)) return
        if (c_associated(widths)) then
            if (.not. size_matches(context, 'widths', size_widths, image_values, status)) return
        end if
        if (observe) then
            status = c_spart_instrument_observe(context%handle, instrument%handle, scene, seed, &
                                                images, widths)
        else
            status = c_spart_instrument_image(context%handle, instrument%handle, scene, images, &
                                              widths)
        end if
    end function instrument_image_located

    function instrument_backproject_located(context, instrument, images, size_images, scenes, &
                                            size_scenes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        type(c_ptr), intent(in) :: images, scenes
        integer(c_int64_t), intent(in) :: size_images, size_scenes
        integer(c_int) :: status
        integer(c_int64_t) :: channels
        status = SPART_OK
        if (c_associated(instrument%handle)) then
            channels = c_spart_instrument_num_channel(instrument%handle)
            if (.not. size_matches(context, 'images', size_images, &
                                   channels*c_spart_instrument_image_size(instrument%handle), &
                                   status)) return
            if (.not. size_matches(context, 'scenes', size_scenes, &
                                   channels*c_spart_instrument_scene_size(instrument%handle), &
                                   status)) return
        end if
        status = c_spart_instrument_backproject(context%handle, instrument%handle, images, scenes)
    end function instrument_backproject_located

    ! MART operators of the instrument; `pair` is storage (declared TARGET)
    ! that must outlive them.
    function spart_instrument_mart_operators(context, instrument, pair, operators) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        type(spart_mart_regridder_pair), intent(inout), target :: pair
        type(spart_mart_operators), intent(out) :: operators
        integer(c_int) :: status
        operators%on_device = 0
        operators%capturable = 0
        status = c_spart_instrument_mart_operators(context%handle, instrument%handle, &
                                                   c_loc(pair), operators)
    end function spart_instrument_mart_operators

    ! ==== the PSF operator (spart/psf.h) =======================================================

    ! The PSF operator of `kernels` for images of shape shape_image, both in
    ! Fortran order: images (nx, ny, orthogonal dimensions...) and kernels =
    ! spart_array_of(k) with k(kx, ky, orthogonal dimensions...), whose
    ! orthogonal dimensions broadcast against the images' (missing trailing
    ! ones and ones of extent 1 share a kernel). The centre of a kernel is
    ! at index floor(n / 2) + 1 along each dimension (1-based); light spread
    ! past an image's edge is lost (spart/psf.h).
    function spart_psf_create(context, kernels, shape_image, psf) result(status)
        type(spart_context), intent(in) :: context
        type(spart_array), intent(in), target :: kernels
        integer(c_int64_t), intent(in) :: shape_image(:)
        type(spart_psf), intent(out) :: psf
        integer(c_int) :: status
        if (.not. fits_ndim(context, size(shape_image), 'shape_image', status)) return
        if (allocated(kernels%dims)) then
            if (.not. fits_ndim(context, size(kernels%dims), 'kernels', status)) return
        end if
        status = c_spart_psf_create(context%handle, c_array(kernels), c_shape(shape_image), &
                                    psf%handle)
    end function spart_psf_create

    ! Free a PSF operator (only null the handle of one an instrument owns).
    ! Accepts a null handle.
    subroutine spart_psf_free(psf)
        type(spart_psf), intent(inout) :: psf
        if (psf%owned) call c_spart_psf_free(psf%handle)
        psf%handle = c_null_ptr
    end subroutine spart_psf_free

    ! A copy of the PSF operator on the context's CUDA device (C's
    ! spart_psf_to_device): its applies then take device memory (use
    ! spart_psf_apply_pointer and spart_psf_apply_adjoint_pointer). One
    ! device copy serves one thread at a time (spart/psf.h).
    function spart_psf_to_device(context, psf, device) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        type(spart_psf), intent(out) :: device
        integer(c_int) :: status
        status = c_spart_psf_to_device(context%handle, psf%handle, device%handle)
    end function spart_psf_to_device

    ! The CUDA device holding the PSF operator, -1 for host memory.
    pure function spart_psf_cuda_device(psf) result(device)
        type(spart_psf), intent(in) :: psf
        integer(c_int) :: device
        device = c_spart_psf_cuda_device(psf%handle)
    end function spart_psf_cuda_device

    ! The image shape it applies to and the kernels' shape, in Fortran order.
    pure function spart_psf_shape_image(psf) result(extents)
        type(spart_psf), intent(in) :: psf
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_psf_shape_image(psf%handle))
    end function spart_psf_shape_image

    pure function spart_psf_shape_kernels(psf) result(extents)
        type(spart_psf), intent(in) :: psf
        integer(c_int64_t), allocatable :: extents(:)
        extents = fortran_shape(c_spart_psf_shape_kernels(psf%handle))
    end function spart_psf_shape_kernels

    ! The C shape of an input of Fortran extents `extents`: the image shape
    ! when the extents are the image's (Fortran order), or the image's
    ! without its dimensions of extent 1, or all its values in one
    ! dimension; else the extents as they are, which C then refuses with
    ! its sentence.
    function psf_shape_input(psf, extents) result(shape)
        type(spart_psf), intent(in) :: psf
        integer(c_int64_t), intent(in) :: extents(:)
        type(shape_c) :: shape
        type(shape_c) :: image
        integer(c_int64_t) :: image_extents(SPART_MAX_NDIM), squeezed(SPART_MAX_NDIM)
        integer :: m, n, j
        image_extents = 0
        squeezed = 0
        image = c_spart_psf_shape_image(psf%handle)
        m = max(0, min(int(image%ndim), int(SPART_MAX_NDIM)))
        do j = 1, m
            image_extents(j) = image%dims(m + 1 - j)
        end do
        shape = c_shape(extents)
        if (size(extents) == m) then
            if (all(extents == image_extents(1:m))) return
        end if
        n = 0
        do j = 1, m
            if (image_extents(j) /= 1) then
                n = n + 1
                squeezed(n) = image_extents(j)
            end if
        end do
        if (n < m .and. size(extents) == n) then
            if (all(extents == squeezed(1:n))) then
                shape = image
                return
            end if
        end if
        if (m > 1 .and. size(extents) == 1) then
            if (extents(1) == product(image_extents(1:m))) shape = image
        end if
    end function psf_shape_input

    ! P input or P^T input on located arrays: every rank-specific
    ! spart_psf_apply and spart_psf_apply_adjoint comes here.
    function psf_apply_located(context, psf, input, extents_input, output, size_output, &
                               adjoint) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        type(c_ptr), intent(in) :: input, output
        integer(c_int64_t), intent(in) :: extents_input(:), size_output
        logical, intent(in) :: adjoint
        integer(c_int) :: status
        type(array_c) :: view
        real(c_double), target :: nothing(1)
        type(c_ptr) :: output_or_nothing
        ! The C library wants an output even for no values: give it a place
        ! (it then says what is wrong with the sizes).
        output_or_nothing = output
        if (.not. c_associated(output)) output_or_nothing = c_loc(nothing)
        view%data = input
        view%shape = c_shape(extents_input)
        if (c_associated(psf%handle)) view%shape = psf_shape_input(psf, extents_input)
        if (adjoint) then
            status = c_spart_psf_apply_adjoint(context%handle, psf%handle, view, &
                                               output_or_nothing, size_output)
        else
            status = c_spart_psf_apply(context%handle, psf%handle, view, output_or_nothing, &
                                       size_output)
        end if
    end function psf_apply_located

    ! output = P input (or P^T input) on arrays by address: input holds
    ! values of shape shape_input (Fortran order, the image shape), output
    ! size_output values (the image's size).
    function spart_psf_apply_pointer(context, psf, input, shape_input, output, size_output) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        type(c_ptr), intent(in) :: input, output
        integer(c_int64_t), intent(in) :: shape_input(:), size_output
        integer(c_int) :: status
        type(array_c) :: view
        if (.not. fits_ndim(context, size(shape_input), 'shape_input', status)) return
        view%data = input
        view%shape = c_shape(shape_input)
        status = c_spart_psf_apply(context%handle, psf%handle, view, output, size_output)
    end function spart_psf_apply_pointer

    function spart_psf_apply_adjoint_pointer(context, psf, input, shape_input, output, &
                                             size_output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        type(c_ptr), intent(in) :: input, output
        integer(c_int64_t), intent(in) :: shape_input(:), size_output
        integer(c_int) :: status
        type(array_c) :: view
        if (.not. fits_ndim(context, size(shape_input), 'shape_input', status)) return
        view%data = input
        view%shape = c_shape(shape_input)
        status = c_spart_psf_apply_adjoint(context%handle, psf%handle, view, output, size_output)
    end function spart_psf_apply_adjoint_pointer

    ! Fill `operators` to run MART on `problem` (declared TARGET, kept while
    ! the operators are used): forward = the regridder then the PSF,
    ! backward = the PSF's adjoint then the backward regridder.
    function spart_mart_operators_from_regridders_psf(context, problem, operators) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_regridder_psf), intent(in), target :: problem
        type(spart_mart_operators), intent(out) :: operators
        integer(c_int) :: status
        operators%on_device = 0
        operators%capturable = 0
        status = c_spart_mart_operators_from_regridders_psf(context%handle, c_loc(problem), &
                                                            operators)
    end function spart_mart_operators_from_regridders_psf

    ! The elliptical Gaussian of ctis's PSF tutorial, normalised to sum 1,
    ! into kernel(n2, n1) (C's kernel[n1][n2]): sigma_major and sigma_minor
    ! are standard deviations in pixels along the direction at `angle`
    ! (degrees) and across it; the angle runs from C's first axis (Fortran's
    ! second dimension: sensor x in an instrument's psf(ky, kx, channel))
    ! towards the second (Fortran's first: sensor y); the centre is at index
    ! floor(n / 2) + 1 along each dimension (spart/psf.h).
    function spart_psf_gaussian(context, sigma_major, sigma_minor, angle, kernel) result(status)
        type(spart_context), intent(in) :: context
        real(c_double), intent(in) :: sigma_major, sigma_minor, angle
        real(c_double), intent(inout), target, contiguous :: kernel(:, :)
        integer(c_int) :: status
        real(c_double), target :: nothing(1)
        type(c_ptr) :: kernel_at
        integer(c_int64_t) :: size_c(2)
        ! C's first axis is the slower one: Fortran's second dimension.
        size_c = [size(kernel, 2, c_int64_t), size(kernel, 1, c_int64_t)]
        kernel_at = c_loc(nothing)
        if (size(kernel) > 0) kernel_at = c_loc(kernel)
        status = c_spart_psf_gaussian(context%handle, sigma_major, sigma_minor, angle, size_c, &
                                      kernel_at, size(kernel, kind=c_int64_t))
    end function spart_psf_gaussian

    ! ==== synthetic scenes (spart/scene.h) =====================================================

    ! The wavelengths (A) of Doppler velocities (km/s) of a line at rest
    ! wavelength wavelength_rest (A); wavelength holds as many values as
    ! velocity.
    function spart_wavelength_from_velocity(context, wavelength_rest, velocity, wavelength) &
        result(status)
        type(spart_context), intent(in) :: context
        real(c_double), intent(in) :: wavelength_rest
        real(c_double), intent(in), target, contiguous :: velocity(:)
        real(c_double), intent(inout), target, contiguous :: wavelength(:)
        integer(c_int) :: status
        real(c_double), target :: nothing(1)
        type(c_ptr) :: velocity_at, wavelength_at
        if (size(wavelength) /= size(velocity)) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'wavelength holds '// &
                          text_of(size(wavelength, kind=c_int64_t))// &
                          ' values, velocity '//text_of(size(velocity, kind=c_int64_t))// &
                          ': give one wavelength per velocity')
            return
        end if
        velocity_at = c_loc(nothing)
        wavelength_at = c_loc(nothing)
        if (size(velocity) > 0) velocity_at = c_loc(velocity)
        if (size(wavelength) > 0) wavelength_at = c_loc(wavelength)
        status = c_spart_wavelength_from_velocity(context%handle, wavelength_rest, &
                                                  size(velocity, kind=c_int64_t), velocity_at, &
                                                  wavelength_at)
    end function spart_wavelength_from_velocity

    ! ctis.scenes.gaussians at the cell centres of the grid given by its
    ! vertices: velocity (km/s, num_wavelength + 1 edges), x and y (arcsec,
    ! num_x + 1 and num_y + 1 vertices). scene: (num_y, num_x,
    ! num_wavelength), the C scene [wavelength][x][y]. Optional: wavelength
    ! (out, the num_wavelength + 1 bin edges in A), the blobs' widths
    ! width_velocity (km/s), width_x and width_y (arcsec).
    function spart_scene_gaussians(context, wavelength_rest, velocity, x, y, scene, wavelength, &
                                   width_velocity, width_x, width_y) result(status)
        type(spart_context), intent(in) :: context
        real(c_double), intent(in) :: wavelength_rest
        real(c_double), intent(in), target, contiguous :: velocity(:), x(:), y(:)
        real(c_double), intent(inout), target, contiguous :: scene(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: wavelength(:)
        real(c_double), intent(in), optional :: width_velocity, width_x, width_y
        integer(c_int) :: status
        type(scene_gaussians_options_c) :: options
        integer(c_int64_t) :: expected(3)
        type(c_ptr) :: wavelength_at, scene_at
        call c_spart_scene_gaussians_options_init(options)
        if (present(width_velocity)) options%width_velocity = width_velocity
        if (present(width_x)) options%width_x = width_x
        if (present(width_y)) options%width_y = width_y
        ! The C function writes through bare pointers: check their sizes.
        expected = [size(y, kind=c_int64_t) - 1, size(x, kind=c_int64_t) - 1, &
                    size(velocity, kind=c_int64_t) - 1]
        if (any(shape(scene, c_int64_t) /= expected)) then
            status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'scene has shape ('// &
                          text_of(size(scene, 1, c_int64_t))//', '// &
                          text_of(size(scene, 2, c_int64_t))//', '// &
                          text_of(size(scene, 3, c_int64_t))//'), but y, x and velocity '// &
                          'give (num_y, num_x, num_wavelength) = ('//text_of(expected(1))// &
                          ', '//text_of(expected(2))//', '//text_of(expected(3))//')')
            return
        end if
        wavelength_at = c_null_ptr
        if (present(wavelength)) then
            if (size(wavelength) /= size(velocity)) then
                status = fail(context, SPART_ERROR_SHAPE_MISMATCH, 'wavelength holds '// &
                              text_of(size(wavelength, kind=c_int64_t))// &
                              ' values, but there are '// &
                              text_of(size(velocity, kind=c_int64_t))//' velocity edges')
                return
            end if
            if (size(wavelength) > 0) wavelength_at = c_loc(wavelength)
        end if
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        status = c_spart_scene_gaussians(context%handle, wavelength_rest, expected(3), &
                                         located(velocity), expected(2), located(x), expected(1), &
                                         located(y), options, wavelength_at, scene_at)
    end function spart_scene_gaussians

    ! The address of a contiguous array, null when it is empty.
    function located(a) result(address)
        real(c_double), intent(in), target, contiguous :: a(:)
        type(c_ptr) :: address
        address = c_null_ptr
        if (size(a) > 0) address = c_loc(a)
    end function located

    ! ==== rank-specific routines ===============================================================
    ! Each locates its arrays and hands them to the routine above that does
    ! the work. A zero-size array is passed as a null address (c_loc needs
    ! one element).

    ! spart_regridder_apply(context, regridder, x, y [, workspace]): y = A x.
    ! x: the input shape in Fortran order (spart_regridder_shape_input),
    ! or that shape without its dimensions of length 1, or all input values
    ! in one dimension; each followed by batch dimensions (each a product of
    ! its own, C's leading axes). y: any shape of
    ! the right number of values, laid out as spart_regridder_apply_shape
    ! says (y(i, b) for x(:, b) when both are flat). workspace (optional):
    ! at least spart_regridder_workspace_size bytes, in 8-byte values.
    function apply_1_1(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:)
        real(c_double), intent(inout), target, contiguous :: y(:)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_1_1

    function apply_1_2(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:)
        real(c_double), intent(inout), target, contiguous :: y(:, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_1_2

    function apply_1_3(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_1_3

    function apply_1_4(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_1_4

    function apply_2_1(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :)
        real(c_double), intent(inout), target, contiguous :: y(:)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_2_1

    function apply_2_2(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_2_2

    function apply_2_3(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_2_3

    function apply_2_4(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_2_4

    function apply_3_1(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_3_1

    function apply_3_2(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_3_2

    function apply_3_3(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_3_3

    function apply_3_4(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_3_4

    function apply_4_1(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_4_1

    function apply_4_2(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_4_2

    function apply_4_3(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_4_3

    function apply_4_4(context, regridder, x, y, workspace) result(status)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: regridder
        real(c_double), intent(in), target, contiguous :: x(:, :, :, :)
        real(c_double), intent(inout), target, contiguous :: y(:, :, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: workspace(:)
        integer(c_int) :: status
        type(c_ptr) :: x_at, y_at
        x_at = c_null_ptr
        if (size(x) > 0) x_at = c_loc(x)
        y_at = c_null_ptr
        if (size(y) > 0) y_at = c_loc(y)
        status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, &
                               size(y, kind=c_int64_t), workspace)
    end function apply_4_4

    ! spart_mart_solve(context, operators, observed, result [, gamma, stop_rule,
    ! threshold, target, max_iterations, keep_intermediate, guess, callback,
    ! callback_user]): MART on observed images (num_channel x image_size values,
    ! any shape: (image values, channels) for a regridder pair, (num_sensor_y,
    ! num_sensor_x, num_channel) for an instrument). guess: scene_size values.
    ! The other options as the fields of spart_mart_options (C defaults when
    ! absent); callback: a bind(C) function of interface
    ! spart_mart_callback_function, called with callback_user.
    function mart_solve_1(context, operators, observed, result, gamma, stop_rule, &
                          threshold, target, max_iterations, keep_intermediate, guess, &
                          callback, callback_user) result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_operators), intent(in) :: operators
        real(c_double), intent(in), target, contiguous :: observed(:)
        type(spart_mart_result), intent(out) :: result
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        real(c_double), intent(in), optional, target, contiguous :: guess(:)
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        integer(c_int) :: status
        type(c_ptr) :: observed_at
        observed_at = c_null_ptr
        if (size(observed) > 0) observed_at = c_loc(observed)
        status = mart_solve_located(context, operators, observed_at, &
                                    size(observed, kind=c_int64_t), result, gamma, &
                                    stop_rule, threshold, target, max_iterations, &
                                    keep_intermediate, guess, callback, callback_user)
    end function mart_solve_1

    function mart_solve_2(context, operators, observed, result, gamma, stop_rule, &
                          threshold, target, max_iterations, keep_intermediate, guess, &
                          callback, callback_user) result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_operators), intent(in) :: operators
        real(c_double), intent(in), target, contiguous :: observed(:, :)
        type(spart_mart_result), intent(out) :: result
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        real(c_double), intent(in), optional, target, contiguous :: guess(:)
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        integer(c_int) :: status
        type(c_ptr) :: observed_at
        observed_at = c_null_ptr
        if (size(observed) > 0) observed_at = c_loc(observed)
        status = mart_solve_located(context, operators, observed_at, &
                                    size(observed, kind=c_int64_t), result, gamma, &
                                    stop_rule, threshold, target, max_iterations, &
                                    keep_intermediate, guess, callback, callback_user)
    end function mart_solve_2

    function mart_solve_3(context, operators, observed, result, gamma, stop_rule, &
                          threshold, target, max_iterations, keep_intermediate, guess, &
                          callback, callback_user) result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_operators), intent(in) :: operators
        real(c_double), intent(in), target, contiguous :: observed(:, :, :)
        type(spart_mart_result), intent(out) :: result
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        real(c_double), intent(in), optional, target, contiguous :: guess(:)
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        integer(c_int) :: status
        type(c_ptr) :: observed_at
        observed_at = c_null_ptr
        if (size(observed) > 0) observed_at = c_loc(observed)
        status = mart_solve_located(context, operators, observed_at, &
                                    size(observed, kind=c_int64_t), result, gamma, &
                                    stop_rule, threshold, target, max_iterations, &
                                    keep_intermediate, guess, callback, callback_user)
    end function mart_solve_3

    function mart_solve_4(context, operators, observed, result, gamma, stop_rule, &
                          threshold, target, max_iterations, keep_intermediate, guess, &
                          callback, callback_user) result(status)
        type(spart_context), intent(in) :: context
        type(spart_mart_operators), intent(in) :: operators
        real(c_double), intent(in), target, contiguous :: observed(:, :, :, :)
        type(spart_mart_result), intent(out) :: result
        real(c_double), intent(in), optional :: gamma, threshold, target
        integer(c_int), intent(in), optional :: stop_rule
        integer(c_int64_t), intent(in), optional :: max_iterations
        logical, intent(in), optional :: keep_intermediate
        real(c_double), intent(in), optional, target, contiguous :: guess(:)
        procedure(spart_mart_callback_function), optional :: callback
        type(c_ptr), intent(in), optional :: callback_user
        integer(c_int) :: status
        type(c_ptr) :: observed_at
        observed_at = c_null_ptr
        if (size(observed) > 0) observed_at = c_loc(observed)
        status = mart_solve_located(context, operators, observed_at, &
                                    size(observed, kind=c_int64_t), result, gamma, &
                                    stop_rule, threshold, target, max_iterations, &
                                    keep_intermediate, guess, callback, callback_user)
    end function mart_solve_4

    ! spart_instrument_image(context, instrument, scene, images [, widths]):
    ! the expected images of a scene and, with widths, their noise widths.
    ! spart_instrument_observe(context, instrument, scene, seed, images [, widths]):
    ! synthetic observations of a scene (seed: a non-negative integer).
    function instrument_image_1_1(context, instrument, scene, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:)
        real(c_double), intent(inout), target, contiguous :: images(:)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .false., 0_c_int64_t)
    end function instrument_image_1_1

    function instrument_observe_1_1(context, instrument, scene, seed, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:)
        integer(c_int64_t), intent(in) :: seed
        real(c_double), intent(inout), target, contiguous :: images(:)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .true., seed)
    end function instrument_observe_1_1

    function instrument_image_1_3(context, instrument, scene, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:)
        real(c_double), intent(inout), target, contiguous :: images(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:, :, :)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .false., 0_c_int64_t)
    end function instrument_image_1_3

    function instrument_observe_1_3(context, instrument, scene, seed, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:)
        integer(c_int64_t), intent(in) :: seed
        real(c_double), intent(inout), target, contiguous :: images(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:, :, :)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .true., seed)
    end function instrument_observe_1_3

    function instrument_image_3_1(context, instrument, scene, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:, :, :)
        real(c_double), intent(inout), target, contiguous :: images(:)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .false., 0_c_int64_t)
    end function instrument_image_3_1

    function instrument_observe_3_1(context, instrument, scene, seed, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:, :, :)
        integer(c_int64_t), intent(in) :: seed
        real(c_double), intent(inout), target, contiguous :: images(:)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .true., seed)
    end function instrument_observe_3_1

    function instrument_image_3_3(context, instrument, scene, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:, :, :)
        real(c_double), intent(inout), target, contiguous :: images(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:, :, :)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .false., 0_c_int64_t)
    end function instrument_image_3_3

    function instrument_observe_3_3(context, instrument, scene, seed, images, widths) &
        result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: scene(:, :, :)
        integer(c_int64_t), intent(in) :: seed
        real(c_double), intent(inout), target, contiguous :: images(:, :, :)
        real(c_double), intent(inout), optional, target, contiguous :: &
            widths(:, :, :)
        integer(c_int) :: status
        type(c_ptr) :: scene_at, images_at, widths_at
        integer(c_int64_t) :: size_widths
        scene_at = c_null_ptr
        if (size(scene) > 0) scene_at = c_loc(scene)
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        widths_at = c_null_ptr
        size_widths = 0
        if (present(widths)) then
            size_widths = size(widths, kind=c_int64_t)
            if (size(widths) > 0) widths_at = c_loc(widths)
        end if
        status = instrument_image_located(context, instrument, scene_at, &
                                          size(scene, kind=c_int64_t), images_at, &
                                          size(images, kind=c_int64_t), widths_at, &
                                          size_widths, .true., seed)
    end function instrument_observe_3_3

    ! spart_instrument_backproject(context, instrument, images, scenes): one
    ! scene per channel, (num_scene_y, num_scene_x, num_wavelength, num_channel)
    ! or flat, from images (num_sensor_y, num_sensor_x, num_channel) or flat.
    function instrument_backproject_1_1(context, instrument, images, scenes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: images(:)
        real(c_double), intent(inout), target, contiguous :: scenes(:)
        integer(c_int) :: status
        type(c_ptr) :: images_at, scenes_at
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        scenes_at = c_null_ptr
        if (size(scenes) > 0) scenes_at = c_loc(scenes)
        status = instrument_backproject_located(context, instrument, images_at, &
                                                size(images, kind=c_int64_t), scenes_at, &
                                                size(scenes, kind=c_int64_t))
    end function instrument_backproject_1_1

    function instrument_backproject_1_4(context, instrument, images, scenes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: images(:)
        real(c_double), intent(inout), target, contiguous :: scenes(:, :, :, :)
        integer(c_int) :: status
        type(c_ptr) :: images_at, scenes_at
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        scenes_at = c_null_ptr
        if (size(scenes) > 0) scenes_at = c_loc(scenes)
        status = instrument_backproject_located(context, instrument, images_at, &
                                                size(images, kind=c_int64_t), scenes_at, &
                                                size(scenes, kind=c_int64_t))
    end function instrument_backproject_1_4

    function instrument_backproject_3_1(context, instrument, images, scenes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: images(:, :, :)
        real(c_double), intent(inout), target, contiguous :: scenes(:)
        integer(c_int) :: status
        type(c_ptr) :: images_at, scenes_at
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        scenes_at = c_null_ptr
        if (size(scenes) > 0) scenes_at = c_loc(scenes)
        status = instrument_backproject_located(context, instrument, images_at, &
                                                size(images, kind=c_int64_t), scenes_at, &
                                                size(scenes, kind=c_int64_t))
    end function instrument_backproject_3_1

    function instrument_backproject_3_4(context, instrument, images, scenes) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(in) :: instrument
        real(c_double), intent(in), target, contiguous :: images(:, :, :)
        real(c_double), intent(inout), target, contiguous :: scenes(:, :, :, :)
        integer(c_int) :: status
        type(c_ptr) :: images_at, scenes_at
        images_at = c_null_ptr
        if (size(images) > 0) images_at = c_loc(images)
        scenes_at = c_null_ptr
        if (size(scenes) > 0) scenes_at = c_loc(scenes)
        status = instrument_backproject_located(context, instrument, images_at, &
                                                size(images, kind=c_int64_t), scenes_at, &
                                                size(scenes, kind=c_int64_t))
    end function instrument_backproject_3_4

    ! spart_psf_apply(context, psf, input, output) and
    ! spart_psf_apply_adjoint(...): output = P input or P^T input. input:
    ! the image shape in Fortran order (spart_psf_shape_image), or that
    ! shape without its dimensions of extent 1, or all the values in one
    ! dimension; output: as many values, of the same rank. Not in place:
    ! give a different array for output.

    function psf_apply_1(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:)
        real(c_double), intent(inout), target, contiguous :: output(:)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .false.)
    end function psf_apply_1

    function psf_apply_2(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:, :)
        real(c_double), intent(inout), target, contiguous :: output(:, :)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .false.)
    end function psf_apply_2

    function psf_apply_3(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:, :, :)
        real(c_double), intent(inout), target, contiguous :: output(:, :, :)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .false.)
    end function psf_apply_3

    function psf_apply_4(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:, :, :, :)
        real(c_double), intent(inout), target, contiguous :: output(:, :, :, :)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .false.)
    end function psf_apply_4

    function psf_apply_adjoint_1(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:)
        real(c_double), intent(inout), target, contiguous :: output(:)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .true.)
    end function psf_apply_adjoint_1

    function psf_apply_adjoint_2(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:, :)
        real(c_double), intent(inout), target, contiguous :: output(:, :)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .true.)
    end function psf_apply_adjoint_2

    function psf_apply_adjoint_3(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:, :, :)
        real(c_double), intent(inout), target, contiguous :: output(:, :, :)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .true.)
    end function psf_apply_adjoint_3

    function psf_apply_adjoint_4(context, psf, input, output) result(status)
        type(spart_context), intent(in) :: context
        type(spart_psf), intent(in) :: psf
        real(c_double), intent(in), target, contiguous :: input(:, :, :, :)
        real(c_double), intent(inout), target, contiguous :: output(:, :, :, :)
        integer(c_int) :: status
        type(c_ptr) :: input_at, output_at
        input_at = c_null_ptr
        if (size(input) > 0) input_at = c_loc(input)
        output_at = c_null_ptr
        if (size(output) > 0) output_at = c_loc(output)
        status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), output_at, &
                                   size(output, kind=c_int64_t), .true.)
    end function psf_apply_adjoint_4
end module spart
