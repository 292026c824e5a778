! tests/fortran/test_fortran_csr_matrix.f90: the CSR matrix of
! spart/csr_matrix.h from Fortran. Host: a matrix made from typed arrays
! and one made from the same arrays by address (spart_csr_matrix_create_pointer,
! copied and wrapped) give the same bits through spart_csr_matrix_multiply
! and spart_csr_matrix_multiply_pointer, for A and its transpose, two
! vectors, float64 and float32 vectors; sizes that do not match are
! refused with a sentence. Device: a host matrix copied there
! (spart_csr_matrix_to_device) and a matrix wrapping device arrays give the
! host's bits on device vectors; without a device both say
! SPART_ERROR_NO_DEVICE with a sentence (and SPART_REQUIRE_GPU=1 fails).
program test_fortran_csr_matrix
    use, intrinsic :: iso_c_binding, only: c_double, c_float, c_int, c_int32_t, c_int64_t, &
                                           c_loc, c_null_ptr, c_ptr, c_size_t
    use spart
    use spart_test_support
    implicit none

    integer, parameter :: rows = 5, columns = 4, entries = 9
    type(spart_context) :: context
    ! 0-based CSR arrays: row 2 is empty, row 4 repeats a column.
    integer(c_int32_t), target :: row_ptr(rows + 1) = [0, 2, 3, 3, 6, 9]
    integer(c_int32_t), target :: column(entries) = [0, 3, 1, 0, 2, 3, 1, 1, 2]
    real(c_double), target :: value(entries) = [0.5d0, -1.25d0, 3.0d0, 0.1d0, 0.7d0, &
                                                -2.5d0, 1.0d0 / 3.0d0, 2.0d0, -0.3d0]
    real(c_double), target :: x(columns, 2), y_typed(rows, 2), y_pointer(rows, 2)
    real(c_double), target :: xt(rows), yt_typed(columns), yt_pointer(columns)
    type(spart_csr_matrix) :: typed, by_address
    integer(c_int) :: status

    call expect_status(context, spart_context_create(context), SPART_OK, 'context')
    x = reshape([1.0d0, 2.0d0, -3.0d0, 0.25d0, 0.5d0, -1.0d0, 4.0d0, 8.0d0], [columns, 2])
    xt = [1.0d0, -2.0d0, 0.5d0, 3.0d0, -0.75d0]
    status = spart_csr_matrix_create(context, int(columns, c_int64_t), row_ptr, column, value, &
                                     typed)
    call expect_status(context, status, SPART_OK, 'typed create')
    call host_pointer_forms_give_the_typed_bits()
    call host_wrapped_reads_the_arrays_in_place()
    call sizes_that_do_not_match_are_refused()
    call device_forms()
    call spart_csr_matrix_free(typed)
    call spart_context_free(context)
    call finish()

contains

    subroutine host_pointer_forms_give_the_typed_bits()
        real(c_float), target :: x32(columns), y32_typed(rows), y32_pointer(rows)
        status = spart_csr_matrix_create_pointer(context, int(rows, c_int64_t), &
                                                 int(columns, c_int64_t), &
                                                 int(entries, c_int64_t), c_loc(row_ptr), &
                                                 c_loc(column), SPART_INT32, c_loc(value), &
                                                 SPART_FLOAT64, .false., by_address, check=.true.)
        call expect_status(context, status, SPART_OK, 'create_pointer (host, copied, checked)')
        status = spart_csr_matrix_multiply(context, typed, x, y_typed)
        call expect_status(context, status, SPART_OK, 'typed multiply, two vectors')
        status = spart_csr_matrix_multiply_pointer(context, by_address, 2_c_int64_t, c_loc(x), &
                                                   c_loc(y_pointer), SPART_FLOAT64)
        call expect_status(context, status, SPART_OK, 'multiply_pointer, two vectors')
        call expect_same_bits(y_typed, y_pointer, 2 * rows, 'pointer forms: the typed bits')
        call expect(transfer(y_typed(3, 1), 0_c_int64_t) == 0_c_int64_t .and. &
                    transfer(y_typed(3, 2), 0_c_int64_t) == 0_c_int64_t, 'empty row gives +0')
        status = spart_csr_matrix_multiply(context, typed, xt, yt_typed, alpha=2.0d0, &
                                           transpose=.true.)
        call expect_status(context, status, SPART_OK, 'typed transpose')
        status = spart_csr_matrix_multiply_pointer(context, by_address, 1_c_int64_t, c_loc(xt), &
                                                   c_loc(yt_pointer), SPART_FLOAT64, &
                                                   alpha=2.0d0, transpose=.true.)
        call expect_status(context, status, SPART_OK, 'multiply_pointer transpose')
        call expect_same_bits(yt_typed, yt_pointer, columns, 'transpose: the typed bits')
        x32 = real(x(:, 1), c_float)
        status = spart_csr_matrix_multiply(context, typed, x32, y32_typed)
        call expect_status(context, status, SPART_OK, 'typed float32 vectors')
        status = spart_csr_matrix_multiply_pointer(context, by_address, 1_c_int64_t, c_loc(x32), &
                                                   c_loc(y32_pointer), SPART_FLOAT32)
        call expect_status(context, status, SPART_OK, 'multiply_pointer float32 vectors')
        call expect(all(transfer(y32_typed, 0_c_int32_t, rows) == &
                        transfer(y32_pointer, 0_c_int32_t, rows)), 'float32: the typed bits')
        call spart_csr_matrix_free(by_address)
    end subroutine host_pointer_forms_give_the_typed_bits

    subroutine host_wrapped_reads_the_arrays_in_place()
        real(c_double), target :: scaled(entries)
        scaled = 2.0d0 * value
        status = spart_csr_matrix_create_pointer(context, int(rows, c_int64_t), &
                                                 int(columns, c_int64_t), &
                                                 int(entries, c_int64_t), c_loc(row_ptr), &
                                                 c_loc(column), SPART_INT32, c_loc(scaled), &
                                                 SPART_FLOAT64, .false., by_address, wrap=.true.)
        call expect_status(context, status, SPART_OK, 'create_pointer (host, wrapped)')
        scaled = value ! a wrapped matrix reads the values where they lie, as they are now
        status = spart_csr_matrix_multiply_pointer(context, by_address, 2_c_int64_t, c_loc(x), &
                                                   c_loc(y_pointer), SPART_FLOAT64)
        call expect_status(context, status, SPART_OK, 'wrapped multiply_pointer')
        call expect_same_bits(y_typed, y_pointer, 2 * rows, 'wrapped: reads the arrays in place')
        call spart_csr_matrix_free(by_address)
    end subroutine host_wrapped_reads_the_arrays_in_place

    subroutine sizes_that_do_not_match_are_refused()
        status = spart_csr_matrix_multiply(context, typed, xt, yt_typed)
        call expect_status(context, status, SPART_ERROR_SHAPE_MISMATCH, 'x of the wrong size')
        call expect(index(spart_context_error(context), 'op(A) takes 4') > 0, &
                    'the sentence says what op(A) takes: '//spart_context_error(context))
    end subroutine sizes_that_do_not_match_are_refused

    subroutine device_forms()
        type(spart_csr_matrix) :: device, wrapped
        type(c_ptr) :: x_device, y_device, row_ptr_device, column_device, value_device
        character(len=32) :: required
        integer :: length
        integer(c_size_t) :: x_bytes, y_bytes
        status = spart_csr_matrix_to_device(context, typed, device)
        if (status == SPART_ERROR_NO_DEVICE) then
            call expect(len(spart_context_error(context)) > 0, 'no device: to_device says why: '// &
                        spart_context_error(context))
            status = spart_csr_matrix_create_pointer(context, int(rows, c_int64_t), &
                                                     int(columns, c_int64_t), &
                                                     int(entries, c_int64_t), c_loc(row_ptr), &
                                                     c_loc(column), SPART_INT32, c_loc(value), &
                                                     SPART_FLOAT64, .true., wrapped, wrap=.true.)
            call expect(status == SPART_ERROR_NO_DEVICE, 'no device: create_pointer says so')
            call get_environment_variable('SPART_REQUIRE_GPU', required, length)
            if (length > 0 .and. required(1:1) == '1') then
                call expect(.false., 'SPART_REQUIRE_GPU=1 but no CUDA device is usable')
            end if
            return
        end if
        call expect_status(context, status, SPART_OK, 'to_device')
        call expect(spart_csr_matrix_on_device(device) /= 0, 'the copy is on the device')
        x_bytes = 8 * size(x, kind=c_size_t)
        y_bytes = 8 * size(y_pointer, kind=c_size_t)
        call expect_status(context, spart_device_malloc(context, x_bytes, x_device), SPART_OK, &
                           'malloc x')
        call expect_status(context, spart_device_malloc(context, y_bytes, y_device), SPART_OK, &
                           'malloc y')
        call expect_status(context, spart_device_copy_to_device(context, x_device, c_loc(x), &
                                                                x_bytes), SPART_OK, 'x up')
        y_pointer = -1.0d0
        status = spart_csr_matrix_multiply_pointer(context, device, 2_c_int64_t, x_device, &
                                                   y_device, SPART_FLOAT64)
        call expect_status(context, status, SPART_OK, 'device multiply_pointer')
        call expect_status(context, spart_device_copy_to_host(context, c_loc(y_pointer), &
                                                              y_device, y_bytes), SPART_OK, 'y down')
        call expect_same_bits(y_typed, y_pointer, 2 * rows, 'device copy: the host bits')
        ! a matrix wrapping device arrays
        call expect_status(context, spart_device_malloc(context, 4 * size(row_ptr, kind=c_size_t), &
                                                        row_ptr_device), SPART_OK, 'malloc row_ptr')
        call expect_status(context, spart_device_malloc(context, 4 * size(column, kind=c_size_t), &
                                                        column_device), SPART_OK, 'malloc columns')
        call expect_status(context, spart_device_malloc(context, 8 * size(value, kind=c_size_t), &
                                                        value_device), SPART_OK, 'malloc values')
        call expect_status(context, spart_device_copy_to_device(context, row_ptr_device, &
                           c_loc(row_ptr), 4 * size(row_ptr, kind=c_size_t)), SPART_OK, 'row_ptr up')
        call expect_status(context, spart_device_copy_to_device(context, column_device, &
                           c_loc(column), 4 * size(column, kind=c_size_t)), SPART_OK, 'columns up')
        call expect_status(context, spart_device_copy_to_device(context, value_device, &
                           c_loc(value), 8 * size(value, kind=c_size_t)), SPART_OK, 'values up')
        status = spart_csr_matrix_create_pointer(context, int(rows, c_int64_t), &
                                                 int(columns, c_int64_t), &
                                                 int(entries, c_int64_t), row_ptr_device, &
                                                 column_device, SPART_INT32, value_device, &
                                                 SPART_FLOAT64, .true., wrapped, wrap=.true., &
                                                 check=.true.)
        call expect_status(context, status, SPART_OK, 'create_pointer (device, wrapped, checked)')
        y_pointer = -1.0d0
        status = spart_csr_matrix_multiply_pointer(context, wrapped, 2_c_int64_t, x_device, &
                                                   y_device, SPART_FLOAT64)
        call expect_status(context, status, SPART_OK, 'wrapped device multiply_pointer')
        call expect_status(context, spart_device_copy_to_host(context, c_loc(y_pointer), &
                                                              y_device, y_bytes), SPART_OK, 'y down')
        call expect_same_bits(y_typed, y_pointer, 2 * rows, 'wrapped device arrays: the host bits')
        call spart_csr_matrix_free(wrapped)
        call spart_csr_matrix_free(device)
        call spart_device_free(context, x_device)
        call spart_device_free(context, y_device)
        call spart_device_free(context, row_ptr_device)
        call spart_device_free(context, column_device)
        call spart_device_free(context, value_device)
    end subroutine device_forms
end program test_fortran_csr_matrix
