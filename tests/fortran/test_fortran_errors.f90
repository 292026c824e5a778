! tests/fortran/test_fortran_errors.f90: bad input from Fortran gets the
! same status and the same sentence as the same bad input from C
! (c_reference.c's reference_error), and what only the Fortran wrappers can
! check (sizes behind bare C pointers, argument counts) gets a sentence of
! its own through the same channel, spart_context_error.
program test_fortran_errors
    use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int64_t, c_null_ptr
    use spart
    use spart_test_support
    implicit none

    call y_one_value_short()
    call x_with_swapped_axes()
    call grids_that_do_not_broadcast()
    call declared_input_shape_that_does_not_fit()
    call grids_with_different_coordinate_counts()
    call too_many_axes()
    call arrays_that_offsets_overrun()
    call device_arrays_are_checked_on_the_host_first()
    call own_sentences_keep_percent_signs()
    call null_handles()
    call finish()

contains

    ! The C sentence and status of bad call `which`.
    subroutine c_error(which, status, sentence)
        integer(c_int), intent(in) :: which
        integer(c_int), intent(out) :: status
        character(len=:), allocatable, intent(out) :: sentence
        character(kind=c_char) :: buffer(SENTENCE_LENGTH)
        status = reference_error(which, buffer, int(SENTENCE_LENGTH, c_int64_t))
        sentence = c_sentence(buffer)
    end subroutine c_error

    ! The status and sentence of Fortran match C's, and are an error.
    subroutine expect_same_error(context, status, which, what)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: status, which
        character(len=*), intent(in) :: what
        integer(c_int) :: c_status
        character(len=:), allocatable :: c_sentence_text
        call c_error(which, c_status, c_sentence_text)
        call expect(c_status /= SPART_OK .and. len(c_sentence_text) > 0, &
                    what//': C refuses it with a sentence')
        call expect(status == c_status, what//': the same status as C ('// &
                    spart_status_string(status)//')')
        call expect(spart_context_error(context) == c_sentence_text, &
                    what//': the same sentence as C')
        write (*, '(a, a)') '        Fortran: ', spart_context_error(context)
        write (*, '(a, a)') '        C:       ', c_sentence_text
    end subroutine expect_same_error

    ! The grids of reference_error (case 3 of c_reference.c), in Fortran
    ! order; y_cells_short: y's vertices one row short, (8, 5).
    function grids(y_rows_short) result(arrays)
        logical, intent(in) :: y_rows_short
        type(spart_array) :: arrays(4)
        real(c_double) :: x_in(8, 6), y_in(8, 6), x_out(7, 5), y_out(7, 5)
        integer :: i, j
        do j = 0, 5
            do i = 0, 7
                x_in(i + 1, j + 1) = i + 0.125_c_double*j
                y_in(i + 1, j + 1) = j + 0.0625_c_double*i
            end do
        end do
        do j = 0, 4
            do i = 0, 6
                x_out(i + 1, j + 1) = -0.5_c_double + 1.25_c_double*i
                y_out(i + 1, j + 1) = -0.25_c_double + 1.5_c_double*j
            end do
        end do
        arrays(1) = spart_array_of(x_in)
        arrays(2) = spart_array_of(y_in)
        if (y_rows_short) arrays(2) = spart_array_of(y_in(:, 1:5))
        arrays(3) = spart_array_of(x_out)
        arrays(4) = spart_array_of(y_out)
    end function grids

    ! A context and the regridder of reference_error's cases.
    subroutine make_regridder(context, weights, regridder)
        type(spart_context), intent(out) :: context
        type(spart_weights), intent(out) :: weights
        type(spart_regridder), intent(out) :: regridder
        type(spart_array) :: arrays(4)
        integer(c_int) :: status
        status = spart_context_create(context)
        arrays = grids(.false.)
        status = spart_weights_build(context, arrays(1:2), arrays(3:4), weights, &
                                     method=SPART_METHOD_CONSERVATIVE, &
                                     algorithm=SPART_ALGORITHM_CLIP)
        call expect_status(context, status, SPART_OK, 'set-up: weights')
        status = spart_regridder_create(context, weights, regridder)
        call expect_status(context, status, SPART_OK, 'set-up: regridder')
    end subroutine make_regridder

    subroutine free_all(context, weights, regridder)
        type(spart_context), intent(inout) :: context
        type(spart_weights), intent(inout) :: weights
        type(spart_regridder), intent(inout) :: regridder
        call spart_regridder_free(regridder)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine free_all

    subroutine y_one_value_short()
        type(spart_context) :: context
        type(spart_weights) :: weights
        type(spart_regridder) :: regridder
        real(c_double) :: x(7, 5), y(23)
        x = 1
        call make_regridder(context, weights, regridder)
        call expect_same_error(context, spart_regridder_apply(context, regridder, x, y), 1, &
                               'y of 23 values for 24')
        call free_all(context, weights, regridder)
    end subroutine y_one_value_short

    subroutine x_with_swapped_axes()
        type(spart_context) :: context
        type(spart_weights) :: weights
        type(spart_regridder) :: regridder
        real(c_double) :: x(5, 7), y(6, 4)
        x = 1
        call make_regridder(context, weights, regridder)
        call expect_same_error(context, spart_regridder_apply(context, regridder, x, y), 2, &
                               'x(5, 7) for input (7, 5)')
        call free_all(context, weights, regridder)
    end subroutine x_with_swapped_axes

    subroutine grids_that_do_not_broadcast()
        type(spart_context) :: context
        type(spart_weights) :: weights
        type(spart_array) :: arrays(4)
        integer(c_int) :: status
        status = spart_context_create(context)
        arrays = grids(.true.)
        status = spart_weights_build(context, arrays(1:2), arrays(3:4), weights, &
                                     method=SPART_METHOD_CONSERVATIVE, &
                                     algorithm=SPART_ALGORITHM_CLIP)
        call expect_same_error(context, status, 3, 'grid x(8, 6) with y(8, 5)')
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine grids_that_do_not_broadcast

    subroutine declared_input_shape_that_does_not_fit()
        type(spart_context) :: context
        type(spart_weights) :: weights
        type(spart_regridder) :: regridder, wrong
        call make_regridder(context, weights, regridder)
        call expect_same_error(context, spart_regridder_create(context, weights, wrong, &
                                                               shape_input=[6_c_int64_t, &
                                                                            5_c_int64_t]), &
                               4, 'regridder shape_input (6, 5) for cells (7, 5)')
        call expect(.not. spart_handle_set(wrong), 'no regridder is left behind')
        call free_all(context, weights, regridder)
    end subroutine declared_input_shape_that_does_not_fit

    ! Two x arrays on one side, one on the other: the C function takes one
    ! count for both, so the wrapper says what is wrong.
    subroutine grids_with_different_coordinate_counts()
        type(spart_context) :: context
        type(spart_weights) :: weights
        type(spart_array) :: arrays(4)
        integer(c_int) :: status
        character(len=*), parameter :: expected = 'coordinates_input has 2 arrays and '// &
                                       'coordinates_output 1: give one per resampled '// &
                                       'dimension on both sides'
        status = spart_context_create(context)
        arrays = grids(.false.)
        status = spart_weights_build(context, arrays(1:2), arrays(3:3), weights)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, &
                    'coordinate counts 2 and 1: invalid argument')
        call expect(spart_context_error(context) == expected, &
                    'coordinate counts 2 and 1: the sentence says so')
        call expect(spart_last_error() == expected, &
                    'coordinate counts 2 and 1: also the thread''s last error')
        status = spart_context_set_threads(context, 1)
        call expect(spart_context_error(context) == expected, &
                    'a setter leaves the sentence (spart/common.h)')
        call spart_context_free(context)
    end subroutine grids_with_different_coordinate_counts

    subroutine too_many_axes()
        type(spart_context) :: context
        type(spart_weights) :: weights
        type(spart_array) :: arrays(4)
        integer(c_int) :: status, axes(17)
        integer :: k
        status = spart_context_create(context)
        arrays = grids(.false.)
        axes = [(-k, k=1, 17)]
        status = spart_weights_build(context, arrays(1:2), arrays(3:4), weights, axis_input=axes)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, '17 axes: refused')
        call expect(spart_context_error(context) == &
                    'axis_input has 17 numbers, more than SPART_MAX_NDIM = 16', &
                    '17 axes: the sentence says so')
        call spart_context_free(context)
    end subroutine too_many_axes

    ! create_from_arrays reads offsets(end) entries of arrays it cannot
    ! measure: the wrapper measures them.
    subroutine arrays_that_offsets_overrun()
        type(spart_context) :: context
        type(spart_weights) :: weights
        integer(c_int) :: status
        status = spart_context_create(context)
        status = spart_weights_create_from_arrays(context, [integer(c_int64_t) ::], [4_c_int64_t], &
                                                  [3_c_int64_t], [0_c_int64_t, 3_c_int64_t], &
                                                  [0_c_int64_t, 1_c_int64_t], &
                                                  [0_c_int64_t, 1_c_int64_t], &
                                                  [0.5_c_double, 0.5_c_double], weights)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'offsets beyond the arrays: refused')
        call expect(spart_context_error(context) == 'offsets ends at 3 entries, but '// &
                    'indices_input, indices_output and values hold 2, 2 and 2', &
                    'offsets beyond the arrays: the sentence gives the sizes')
        status = spart_weights_create_from_arrays(context, [integer(c_int64_t) ::], [4_c_int64_t], &
                                                  [3_c_int64_t], [0_c_int64_t, 2_c_int64_t], &
                                                  [0_c_int64_t, 3_c_int64_t], &
                                                  [0_c_int64_t, 2_c_int64_t], &
                                                  [0.5_c_double, 0.5_c_double], weights)
        call expect_status(context, status, SPART_OK, 'create_from_arrays: right sizes')
        call expect(spart_weights_num_entries(weights) == 2 .and. &
                    all(spart_weights_shape_input(weights) == [4]), &
                    'create_from_arrays: 2 entries, input (4)')
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine arrays_that_offsets_overrun

    ! create_device_from_arrays_pointer: what the wrapper and the C host
    ! checks refuse comes before any device work, so it is the same with
    ! or without a GPU (null device addresses are never read).
    subroutine device_arrays_are_checked_on_the_host_first()
        type(spart_context) :: context
        type(spart_regridder) :: regridder
        integer(c_int) :: status
        status = spart_context_create(context)
        status = spart_regridder_create_device_from_arrays_pointer( &
                 context, [2_c_int64_t], [4_c_int64_t, 2_c_int64_t], [3_c_int64_t, 2_c_int64_t], &
                 [0_c_int64_t, 3_c_int64_t], c_null_ptr, c_null_ptr, c_null_ptr, regridder)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'device arrays, short offsets: refused')
        call expect(spart_context_error(context) == 'offsets has 2 values, but '// &
                    'shape_orthogonal has 2 elements (it needs one more)', &
                    'device arrays, short offsets: the sentence gives the sizes')
        status = spart_regridder_create_device_from_arrays_pointer( &
                 context, [2_c_int64_t], [4_c_int64_t, 2_c_int64_t], [3_c_int64_t, 2_c_int64_t], &
                 [0_c_int64_t, 3_c_int64_t, 5_c_int64_t], c_null_ptr, c_null_ptr, c_null_ptr, &
                 regridder)
        call expect(status == SPART_ERROR_NULL_POINTER, 'device arrays, null addresses: refused')
        status = spart_regridder_create_device_from_arrays_pointer( &
                 context, [2_c_int64_t], [4_c_int64_t, 2_c_int64_t], [3_c_int64_t, 2_c_int64_t], &
                 [0_c_int64_t, 0_c_int64_t, 0_c_int64_t], c_null_ptr, c_null_ptr, c_null_ptr, &
                 regridder, value_type=7_c_int)
        call expect(status == SPART_ERROR_UNKNOWN_ENUM, 'device arrays, value_type 7: refused')
        call expect(.not. spart_handle_set(regridder), 'device arrays: no regridder left behind')
        call spart_context_free(context)
    end subroutine device_arrays_are_checked_on_the_host_first

    ! spart_context_set_error takes a sentence, not a printf format.
    subroutine own_sentences_keep_percent_signs()
        type(spart_context) :: context
        integer(c_int) :: status
        status = spart_context_create(context)
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT, &
                                         'my operator: 100% of %s and %d are kept')
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, 'set_error: returns the status')
        call expect(spart_context_error(context) == 'my operator: 100% of %s and %d are kept', &
                    'set_error: the sentence comes back as written')
        call spart_context_free(context)
    end subroutine own_sentences_keep_percent_signs

    subroutine null_handles()
        type(spart_context) :: context
        type(spart_regridder) :: regridder
        type(spart_weights) :: weights
        real(c_double) :: x(3), y(3)
        integer(c_int) :: status
        x = 1
        status = spart_context_create(context)
        status = spart_regridder_apply(context, regridder, x, y)
        call expect(status == SPART_ERROR_NULL_POINTER, 'a null regridder: null pointer')
        call expect(len(spart_context_error(context)) > 0, 'a null regridder: a sentence')
        call expect(spart_weights_num_entries(weights) == 0 .and. &
                    size(spart_weights_shape_input(weights)) == 0, &
                    'a null weights handle: nothing, no crash')
        call spart_weights_free(weights)
        call spart_regridder_free(regridder)
        call spart_context_free(context)
    end subroutine null_handles

    logical function spart_handle_set(regridder)
        use, intrinsic :: iso_c_binding, only: c_associated
        type(spart_regridder), intent(in) :: regridder
        spart_handle_set = c_associated(regridder%handle)
    end function spart_handle_set
end program test_fortran_errors
