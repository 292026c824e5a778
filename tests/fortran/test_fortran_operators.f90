! tests/fortran/test_fortran_operators.f90: weights built and operators
! assembled and applied from Fortran give the same bits as the same work
! done in C (c_reference.c), for every builder, a vector, a batch, the exact
! and the conservative transposes; Fortran arrays are the C arrays with
! their axes reversed; files saved from Fortran load back to the same
! products.
program test_fortran_operators
    use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int64_t, c_size_t
    use spart
    use spart_test_support
    implicit none

    call same_bits_as_c(CASE_MULTILINEAR_2D, 'multilinear 2-D')
    call same_bits_as_c(CASE_CONSERVATIVE_1D, 'conservative 1-D')
    call same_bits_as_c(CASE_CONSERVATIVE_2D, 'conservative 2-D')
    call same_bits_as_c(CASE_CONSERVATIVE_2D_SWEEP, 'conservative 2-D sweep')
    call same_bits_as_c(CASE_SHARED_INPUT_FLOAT32, 'float32, shared input')
    call shapes_are_reversed()
    call files_give_the_same_products()
    call version_and_status_names()
    call finish()

contains

    ! The regridder of a case: case 5 shares one input (8, 1) among the
    ! three elements and stores float32 values.
    function build_regridder(context, which, weights, regridder) result(status)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: which
        type(spart_weights), intent(in) :: weights
        type(spart_regridder), intent(out) :: regridder
        integer(c_int) :: status
        if (which == CASE_SHARED_INPUT_FLOAT32) then
            status = spart_regridder_create(context, weights, regridder, &
                                            shape_input=[8_c_int64_t, 1_c_int64_t], &
                                            value_type=SPART_FLOAT32)
        else
            status = spart_regridder_create(context, weights, regridder)
        end if
    end function build_regridder

    ! Weights arrays equal to those C built, entry for entry, bit for bit.
    subroutine expect_same_weights(mine, theirs, what)
        type(spart_weights), intent(in) :: mine, theirs
        character(len=*), intent(in) :: what
        integer(c_int64_t), pointer :: offsets(:), indices_input(:), indices_output(:)
        integer(c_int64_t), pointer :: c_offsets(:), c_indices_input(:), c_indices_output(:)
        real(c_double), pointer :: values(:), c_values(:)
        integer(c_int) :: status, c_status
        status = spart_weights_arrays(mine, offsets, indices_input, indices_output, values)
        c_status = spart_weights_arrays(theirs, c_offsets, c_indices_input, c_indices_output, &
                                        c_values)
        call expect(status == SPART_OK .and. c_status == SPART_OK, what//': weights arrays')
        if (status /= SPART_OK .or. c_status /= SPART_OK) return
        call expect(size(values) == size(c_values) .and. size(offsets) == size(c_offsets), &
                    what//': as many entries and elements as C')
        if (size(values) /= size(c_values) .or. size(offsets) /= size(c_offsets)) return
        call expect(all(offsets == c_offsets) .and. all(indices_input == c_indices_input) .and. &
                    all(indices_output == c_indices_output), what//': the same indices as C')
        call expect_same_bits(values, c_values, size(values), what//': the same values as C')
    end subroutine expect_same_weights

    ! The whole chain in Fortran and in C, compared bit for bit.
    subroutine same_bits_as_c(which, what)
        integer(c_int), intent(in) :: which
        character(len=*), intent(in) :: what
        type(spart_context) :: context
        type(spart_weights) :: weights, c_weights
        type(spart_regridder) :: regridder, transposed, conservative
        type(spart_array), allocatable :: grid_input(:), grid_output(:)
        integer(c_int64_t), allocatable :: shape_in(:), shape_out(:)
        real(c_double), allocatable :: x(:, :), x_batch(:, :, :), y(:, :), y_batch(:, :, :)
        real(c_double), allocatable :: x_back(:, :), x_conservative(:, :), workspace(:)
        real(c_double), allocatable :: y_flat(:), y_flat_batch(:, :)
        real(c_double), allocatable :: c_y(:), c_y_batch(:), c_x_back(:), c_x_conservative(:)
        character(kind=c_char) :: sentence(SENTENCE_LENGTH)
        integer(c_size_t) :: bytes
        logical :: conservative_case
        integer :: i, j, b
        integer(c_int) :: status

        call expect_status(context, spart_context_create(context), SPART_OK, what//': context')
        status = build_weights(context, which, weights, grid_input, grid_output)
        call expect_status(context, status, SPART_OK, what//': weights from Fortran')
        status = build_regridder(context, which, weights, regridder)
        call expect_status(context, status, SPART_OK, what//': regridder from Fortran')
        if (status /= SPART_OK) return
        shape_in = spart_regridder_shape_input(regridder)
        shape_out = spart_regridder_shape_output(regridder)
        call expect(size(shape_in) == 2 .and. size(shape_out) == 2, what//': shapes of rank 2')

        ! Inputs: x(i, j) is c_reference.c's x[j][i]; the batch on the last
        ! Fortran dimension is C's leading axis.
        allocate (x(shape_in(1), shape_in(2)), x_batch(shape_in(1), shape_in(2), 3))
        do j = 0, int(shape_in(2)) - 1
            do i = 0, int(shape_in(1)) - 1
                x(i + 1, j + 1) = value_at(i, j, 0)
                do b = 1, 3
                    x_batch(i + 1, j + 1, b) = b*value_at(i, j, 0)
                end do
            end do
        end do
        allocate (y(shape_out(1), shape_out(2)), y_batch(shape_out(1), shape_out(2), 3))
        allocate (x_back(shape_in(1), shape_in(2)), x_conservative(shape_in(1), shape_in(2)))
        x_conservative = 0

        ! The same in C.
        allocate (c_y(size(y)), c_y_batch(size(y_batch)), c_x_back(size(x_back)))
        allocate (c_x_conservative(size(x_conservative)))
        c_x_conservative = 0
        status = reference_case(which, c_weights%handle, c_y, size(c_y, kind=c_int64_t), &
                                c_y_batch, size(c_y_batch, kind=c_int64_t), c_x_back, &
                                size(c_x_back, kind=c_int64_t), c_x_conservative, &
                                size(c_x_conservative, kind=c_int64_t), sentence, &
                                int(SENTENCE_LENGTH, c_int64_t))
        call expect(status == SPART_OK, what//': the C reference ran')
        if (status /= SPART_OK) write (*, '(a, a)') '        ', c_sentence(sentence)
        call expect_same_weights(weights, c_weights, what)

        call expect_status(context, spart_regridder_apply(context, regridder, x, y), SPART_OK, &
                           what//': apply to a vector')
        call expect_same_bits(y, c_y, size(y), what//': y = A x as in C')
        call expect_status(context, spart_regridder_apply(context, regridder, x_batch, y_batch), &
                           SPART_OK, what//': apply to a batch')
        call expect_same_bits(y_batch, c_y_batch, size(y_batch), what//': a batch as in C')

        ! Flat arrays: all input values in the first dimension.
        allocate (y_flat(size(y)), y_flat_batch(size(y), 3))
        call expect_status(context, spart_regridder_apply(context, regridder, &
                                                          reshape(x, [size(x)]), y_flat), &
                           SPART_OK, what//': apply to a flat vector')
        call expect_same_bits(y_flat, c_y, size(y), what//': a flat vector as in C')
        call expect_status(context, spart_regridder_apply(context, regridder, &
                                                          reshape(x_batch, [size(x), 3]), &
                                                          y_flat_batch), &
                           SPART_OK, what//': apply to a flat batch')
        call expect_same_bits(y_flat_batch, c_y_batch, size(y_batch), &
                              what//': a flat batch as in C')

        ! Your own workspace.
        call expect_status(context, spart_regridder_workspace_size(context, regridder, &
                                                                   shape(x_batch, c_int64_t), &
                                                                   bytes), &
                           SPART_OK, what//': workspace size')
        allocate (workspace(bytes/8 + 1))
        y_batch = 0
        call expect_status(context, spart_regridder_apply(context, regridder, x_batch, y_batch, &
                                                          workspace), &
                           SPART_OK, what//': apply with a workspace')
        call expect_same_bits(y_batch, c_y_batch, size(y_batch), &
                              what//': with a workspace as in C')

        ! The exact transpose.
        call expect_status(context, spart_regridder_transpose(context, regridder, transposed), &
                           SPART_OK, what//': exact transpose')
        call expect_status(context, spart_regridder_apply(context, transposed, y, x_back), &
                           SPART_OK, what//': apply the exact transpose')
        call expect_same_bits(x_back, c_x_back, size(x_back), what//': A^T y as in C')

        ! The conservative transpose.
        conservative_case = which == CASE_CONSERVATIVE_1D .or. which == CASE_CONSERVATIVE_2D .or. &
                            which == CASE_CONSERVATIVE_2D_SWEEP
        if (conservative_case) then
            if (which == CASE_CONSERVATIVE_1D) then
                status = spart_regridder_transpose_conservative( &
                         context, regridder, grid_input, grid_output, conservative, &
                         axis_input=[-1], axis_output=[-1], &
                         weights_input=spart_array_of([(1.0_c_double + 0.5_c_double*i, i=0, 7)]))
            else
                status = spart_regridder_transpose_conservative(context, regridder, grid_input, &
                                                                grid_output, conservative)
            end if
            call expect_status(context, status, SPART_OK, what//': conservative transpose')
            call expect_status(context, spart_regridder_apply(context, conservative, y, &
                                                              x_conservative), &
                               SPART_OK, what//': apply the conservative transpose')
            call expect_same_bits(x_conservative, c_x_conservative, size(x_conservative), &
                                  what//': the conservative transpose as in C')
        end if

        ! Freeing a transpose does nothing (the regridder owns it).
        call spart_regridder_free(transposed)
        call spart_regridder_free(conservative)
        call spart_regridder_free(regridder)
        call spart_weights_free(c_weights)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine same_bits_as_c

    ! A Fortran array a(nx, ny) is the C array [ny][nx]: the 2-D grids of
    ! (8, 6) vertices have (7, 5) cells, which C calls 5x7.
    subroutine shapes_are_reversed()
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: regridder
        type(spart_array), allocatable :: grid_input(:), grid_output(:)
        integer(c_int64_t), allocatable :: shape_y(:)
        integer(c_int), allocatable :: axis_input(:), axis_output(:)
        real(c_double), allocatable :: cells(:, :)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, 'shapes: context')
        status = build_weights(context, CASE_CONSERVATIVE_2D, weights, grid_input, grid_output)
        call expect_status(context, status, SPART_OK, 'shapes: weights')
        call expect(all(spart_weights_shape_input(weights) == [7, 5]), &
                    'shapes: weights shape_input is (7, 5), Fortran order')
        call expect(all(spart_weights_shape_output(weights) == [6, 4]), &
                    'shapes: weights shape_output is (6, 4), Fortran order')
        call expect(size(spart_weights_shape_orthogonal(weights)) == 0, &
                    'shapes: no orthogonal axes')
        call spart_weights_axes(weights, axis_input, axis_output)
        call expect(all(axis_input == [0, 1]) .and. all(axis_output == [0, 1]), &
                    'shapes: resampled axes are C axes 0 and 1')
        status = spart_regridder_create(context, weights, regridder)
        call expect_status(context, status, SPART_OK, 'shapes: regridder')
        call expect(all(spart_regridder_shape_input(regridder) == [7, 5]) .and. &
                    all(spart_regridder_shape_output(regridder) == [6, 4]), &
                    'shapes: the regridder takes (7, 5) and gives (6, 4)')
        call expect(spart_regridder_num_columns(regridder) == 35 .and. &
                    spart_regridder_num_rows(regridder) == 24, 'shapes: 24 rows, 35 columns')
        status = spart_regridder_apply_shape(context, regridder, [7_c_int64_t, 5_c_int64_t, &
                                                                  3_c_int64_t], shape_y)
        call expect_status(context, status, SPART_OK, 'shapes: apply_shape')
        call expect(all(shape_y == [6, 4, 3]), 'shapes: a batch of 3 gives (6, 4, 3)')
        ! An array with the C shape's order (5, 7) is the transposed array:
        ! refused, not read in the wrong order.
        allocate (cells(5, 7))
        cells = 1
        block
            real(c_double) :: y(6, 4)
            status = spart_regridder_apply(context, regridder, cells, y)
        end block
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, &
                    'shapes: x(5, 7) is refused for input (7, 5)')
        call expect(index(spart_context_error(context), 'x has shape 7x5') > 0, &
                    'shapes: the sentence writes x(5, 7) in C order, 7x5')
        ! Weights transposes: the shapes swap.
        status = spart_weights_transpose(context, weights, transposed)
        call expect_status(context, status, SPART_OK, 'shapes: weights transpose')
        call expect(all(spart_weights_shape_input(transposed) == [6, 4]) .and. &
                    spart_weights_num_entries(transposed) == spart_weights_num_entries(weights), &
                    'shapes: the transposed weights take (6, 4)')
        call spart_weights_free(transposed)
        status = spart_weights_transpose_conservative(context, weights, grid_input, grid_output, &
                                                      transposed)
        call expect_status(context, status, SPART_OK, 'shapes: weights conservative transpose')
        call expect(all(spart_weights_shape_output(transposed) == [7, 5]), &
                    'shapes: the conservative transpose gives (7, 5)')
        call spart_weights_free(transposed)
        call spart_regridder_free(regridder)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine shapes_are_reversed

    ! Weights and regridders saved from Fortran load back to the same arrays
    ! and products.
    subroutine files_give_the_same_products()
        type(spart_context) :: context
        type(spart_weights) :: weights, loaded_weights
        type(spart_regridder) :: regridder, loaded
        type(spart_array), allocatable :: grid_input(:), grid_output(:)
        real(c_double) :: x(7, 5), y(6, 4), y_loaded(6, 4)
        character(len=:), allocatable :: sentence
        integer(c_int) :: status
        integer :: i, j
        call expect_status(context, spart_context_create(context), SPART_OK, 'files: context')
        status = build_weights(context, CASE_CONSERVATIVE_2D, weights, grid_input, grid_output)
        status = spart_weights_save(context, weights, 'fortran_weights.fits', overwrite=.true.)
        call expect_status(context, status, SPART_OK, 'files: save weights')
        status = spart_weights_save(context, weights, 'fortran_weights.fits')
        call expect(status == SPART_ERROR_IO, 'files: no overwrite unless asked')
        status = spart_weights_load(context, 'fortran_weights.fits', loaded_weights)
        call expect_status(context, status, SPART_OK, 'files: load weights')
        call expect_same_weights(loaded_weights, weights, 'files')
        status = spart_regridder_create(context, loaded_weights, regridder)
        do j = 1, 5
            do i = 1, 7
                x(i, j) = value_at(i - 1, j - 1, 0)
            end do
        end do
        status = spart_regridder_apply(context, regridder, x, y)
        status = spart_regridder_save(context, regridder, 'fortran_regridder.fits', &
                                      overwrite=.true.)
        call expect_status(context, status, SPART_OK, 'files: save regridder')
        status = spart_regridder_load(context, 'fortran_regridder.fits', loaded)
        call expect_status(context, status, SPART_OK, 'files: load regridder')
        status = spart_regridder_apply(context, loaded, x, y_loaded)
        call expect_same_bits(y_loaded, y, size(y), 'files: the loaded regridder, same bits')
        call expect(spart_regridder_cuda_device(loaded) == -1, 'files: a host regridder')
        status = spart_regridder_load(context, 'no_such_file.fits', loaded)
        sentence = spart_context_error(context)
        call expect(status == SPART_ERROR_IO .and. len(sentence) > 0, &
                    'files: a missing file is an I/O error with a sentence: '//sentence)
        call spart_regridder_free(loaded)
        call spart_regridder_free(regridder)
        call spart_weights_free(loaded_weights)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine files_give_the_same_products

    subroutine version_and_status_names()
        type(spart_context) :: context
        character(len=:), allocatable :: version
        version = spart_version()
        call expect(len(version) >= 5 .and. spart_version_number() >= 100, 'version: '//version)
        call expect(spart_status_string(SPART_ERROR_SHAPE_MISMATCH) == &
                    'SPART_ERROR_SHAPE_MISMATCH', 'status names')
        call expect_status(context, spart_context_create(context), SPART_OK, 'threads: context')
        call expect_status(context, spart_context_set_threads(context, 1), SPART_OK, &
                           'threads: set one')
        call expect(spart_context_threads(context) == 1, 'threads: one thread')
        call expect(spart_context_set_threads(context, -1) == SPART_ERROR_INVALID_ARGUMENT, &
                    'threads: negative refused')
        call spart_context_free(context)
        call spart_context_free(context)
        call expect(spart_context_set_threads(context, 1) == SPART_ERROR_NULL_POINTER, &
                    'a freed context is null')
        version = spart_last_error()
        call expect(len(version) > 0, 'a freed context: the thread''s last error says '//version)
    end subroutine version_and_status_names
end program test_fortran_operators
