! tests/fortran/test_fortran_psf.f90: the PSF from Fortran gives the same
! bits as from C (c_reference.c): the FFT operator and its adjoint on
! images of any rank, weights convolved with a kernel, the elliptical
! Gaussian kernel, an instrument with a PSF composed by FFT or folded into
! its weights, and MART over a regridder pair with the PSF between them.
! Sizes and shapes the C functions cannot see are checked, with sentences.
program test_fortran_psf
    use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_double, c_int, c_int64_t, &
                                           c_loc
    use spart
    use spart_test_support
    implicit none

    integer, parameter :: CAPACITY = 4096

    call psf_operator_has_the_bits_of_c()
    call bad_psf_calls_are_refused_with_sentences()
    call convolved_weights_have_the_bits_of_c()
    call gaussian_kernel_has_the_bits_of_c()
    call instrument_with_a_psf_has_the_bits_of_c(.false.)
    call instrument_with_a_psf_has_the_bits_of_c(.true.)
    call finish()

contains

    ! The kernels k(kx = 4, ky = 3, channel = 2) = value_at / 64 and the
    ! images x(nx = 7, ny = 6, channel = 2) = value_at: c_reference.c's
    ! [2][3][4] and [2][6][7].
    subroutine make_kernels_and_images(kernels, images)
        real(c_double), intent(out) :: kernels(4, 3, 2), images(7, 6, 2)
        integer :: i, j, c
        do c = 0, 1
            do j = 0, 2
                do i = 0, 3
                    kernels(i + 1, j + 1, c + 1) = value_at(i, j, c)/64.0_c_double
                end do
            end do
            do j = 0, 5
                do i = 0, 6
                    images(i + 1, j + 1, c + 1) = value_at(i, j, c)
                end do
            end do
        end do
    end subroutine make_kernels_and_images

    ! What c_reference.c's reference_psf_operator computes.
    subroutine c_operator(applied, adjoint, offsets, indices_input, indices_output, values, &
                          entries, gaussian)
        real(c_double), intent(out) :: applied(84), adjoint(84), values(CAPACITY), gaussian(35)
        integer(c_int64_t), intent(out) :: offsets(2), indices_input(CAPACITY)
        integer(c_int64_t), intent(out) :: indices_output(CAPACITY), entries
        character(kind=c_char) :: sentence(SENTENCE_LENGTH)
        integer(c_int) :: status
        status = reference_psf_operator(applied, adjoint, offsets, indices_input, indices_output, &
                                        values, int(CAPACITY, c_int64_t), entries, gaussian, &
                                        sentence, int(SENTENCE_LENGTH, c_int64_t))
        call expect(status == SPART_OK .and. entries > 0, 'the C reference ran')
        if (status /= SPART_OK) write (*, '(a, a)') '        ', c_sentence(sentence)
    end subroutine c_operator

    subroutine psf_operator_has_the_bits_of_c()
        type(spart_context) :: context
        type(spart_psf) :: psf
        real(c_double) :: kernels(4, 3, 2)
        real(c_double), target :: images(7, 6, 2), applied(7, 6, 2), by_address(7, 6, 2)
        real(c_double) :: adjoint(7, 6, 2), flat(84)
        real(c_double) :: c_applied(84), c_adjoint(84), values(CAPACITY), gaussian(35)
        integer(c_int64_t) :: offsets(2), indices_input(CAPACITY), indices_output(CAPACITY)
        integer(c_int64_t) :: entries
        integer(c_int) :: status
        call c_operator(c_applied, c_adjoint, offsets, indices_input, indices_output, values, &
                        entries, gaussian)
        call expect_status(context, spart_context_create(context), SPART_OK, 'psf: context')
        call make_kernels_and_images(kernels, images)
        status = spart_psf_create(context, spart_array_of(kernels), &
                                  [7_c_int64_t, 6_c_int64_t, 2_c_int64_t], psf)
        call expect_status(context, status, SPART_OK, 'psf: created')
        call expect(all(spart_psf_shape_image(psf) == [7, 6, 2]), 'psf: images (7, 6, 2)')
        call expect(all(spart_psf_shape_kernels(psf) == [4, 3, 2]), 'psf: kernels (4, 3, 2)')
        status = spart_psf_apply(context, psf, images, applied)
        call expect_status(context, status, SPART_OK, 'psf: applied')
        call expect_same_bits(applied, c_applied, 84, 'psf: P x as in C')
        status = spart_psf_apply_adjoint(context, psf, images, adjoint)
        call expect_status(context, status, SPART_OK, 'psf: adjoint applied')
        call expect_same_bits(adjoint, c_adjoint, 84, 'psf: P^T x as in C')
        status = spart_psf_apply(context, psf, reshape(images, [84]), flat)
        call expect_status(context, status, SPART_OK, 'psf: flat arrays')
        call expect_same_bits(flat, c_applied, 84, 'psf: flat arrays, the same')
        status = spart_psf_apply_pointer(context, psf, c_loc(images), &
                                         [7_c_int64_t, 6_c_int64_t, 2_c_int64_t], &
                                         c_loc(by_address), 84_c_int64_t)
        call expect_status(context, status, SPART_OK, 'psf: by address')
        call expect_same_bits(by_address, c_applied, 84, 'psf: by address, the same')
        status = spart_psf_apply_adjoint_pointer(context, psf, c_loc(images), &
                                                 [7_c_int64_t, 6_c_int64_t, 2_c_int64_t], &
                                                 c_loc(by_address), 84_c_int64_t)
        call expect_same_bits(by_address, c_adjoint, 84, 'psf: adjoint by address, the same')
        call spart_psf_free(psf)
        call spart_psf_free(psf)
        call expect(.not. c_associated(psf%handle), 'psf: freed twice, the handle null')
        call spart_context_free(context)
    end subroutine psf_operator_has_the_bits_of_c

    subroutine bad_psf_calls_are_refused_with_sentences()
        type(spart_context) :: context
        type(spart_psf) :: psf
        real(c_double) :: kernels(4, 3, 2), images(7, 6, 2), output(7, 6, 2), short(83)
        real(c_double) :: line(5)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, 'bad psf: context')
        call make_kernels_and_images(kernels, images)
        line = 1
        status = spart_psf_create(context, spart_array_of(line), [7_c_int64_t, 6_c_int64_t], psf)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT .and. &
                    .not. c_associated(psf%handle), 'bad psf: a kernel of rank 1 refused')
        call expect(index(spart_context_error(context), 'at least 2 axes') > 0, &
                    'bad psf: the sentence says why: '//spart_context_error(context))
        kernels(2, 1, 1) = ieee_nan()
        status = spart_psf_create(context, spart_array_of(kernels), &
                                  [7_c_int64_t, 6_c_int64_t, 2_c_int64_t], psf)
        call expect(status == SPART_ERROR_NOT_FINITE, 'bad psf: a NaN kernel value refused')
        call expect(index(spart_context_error(context), 'kernel value 1 ') > 0, &
                    'bad psf: the sentence gives its C flat index: '// &
                    spart_context_error(context))
        kernels(2, 1, 1) = 0
        status = spart_psf_create(context, spart_array_of(kernels), &
                                  [7_c_int64_t, 6_c_int64_t, 3_c_int64_t], psf)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, &
                    'bad psf: 2 kernels for 3 images refused')
        status = spart_psf_create(context, spart_array_of(kernels), &
                                  [7_c_int64_t, 6_c_int64_t, 2_c_int64_t], psf)
        call expect_status(context, status, SPART_OK, 'bad psf: a good one made')
        status = spart_psf_apply(context, psf, images(1:6, :, :), output(1:6, :, :))
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'bad psf: images (6, 6, 2) refused')
        call expect(index(spart_context_error(context), 'input has shape 2x6x6') > 0, &
                    'bad psf: the sentence gives the C shape: '//spart_context_error(context))
        status = spart_psf_apply(context, psf, reshape(images, [84]), short)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, 'bad psf: 83 output values refused')
        call expect(index(spart_context_error(context), 'size_output = 83') > 0, &
                    'bad psf: the sentence gives the size: '//spart_context_error(context))
        images(3, 1, 1) = ieee_nan()
        status = spart_psf_apply_adjoint(context, psf, images, output)
        call expect(status == SPART_ERROR_NOT_FINITE, 'bad psf: a NaN image value refused')
        call spart_psf_free(psf)
        call spart_context_free(context)
    end subroutine bad_psf_calls_are_refused_with_sentences

    ! A quiet NaN, made at run time.
    function ieee_nan() result(value)
        use, intrinsic :: ieee_arithmetic, only: ieee_quiet_nan, ieee_value
        real(c_double) :: value
        value = ieee_value(value, ieee_quiet_nan)
    end function ieee_nan

    subroutine convolved_weights_have_the_bits_of_c()
        type(spart_context) :: context
        type(spart_weights) :: weights, convolved
        type(spart_array), allocatable :: grid_input(:), grid_output(:)
        real(c_double) :: kernel(3, 2), line(3)
        real(c_double) :: c_applied(84), c_adjoint(84), c_values(CAPACITY), gaussian(35)
        integer(c_int64_t) :: c_offsets(2), c_input(CAPACITY), c_output(CAPACITY), entries
        integer(c_int64_t), pointer :: offsets(:), indices_input(:), indices_output(:)
        real(c_double), pointer :: values(:)
        integer(c_int) :: status
        integer :: i, j, n
        call c_operator(c_applied, c_adjoint, c_offsets, c_input, c_output, c_values, entries, &
                        gaussian)
        call expect_status(context, spart_context_create(context), SPART_OK, 'convolve: context')
        status = build_weights(context, CASE_CONSERVATIVE_2D, weights, grid_input, grid_output)
        call expect_status(context, status, SPART_OK, 'convolve: weights of case 3')
        do j = 0, 1
            do i = 0, 2
                kernel(i + 1, j + 1) = value_at(i, j, 0)/32.0_c_double
            end do
        end do
        status = spart_weights_convolve(context, weights, spart_array_of(kernel), convolved)
        call expect_status(context, status, SPART_OK, 'convolve: convolved')
        call expect(all(spart_weights_shape_output(convolved) == spart_weights_shape_output(weights)), &
                    'convolve: the output shape kept')
        status = spart_weights_arrays(convolved, offsets, indices_input, indices_output, values)
        n = int(entries)
        call expect(status == SPART_OK .and. spart_weights_num_entries(convolved) == entries, &
                    'convolve: as many entries as in C')
        if (size(values) == n) then
            call expect(all(offsets == c_offsets) .and. all(indices_input == c_input(1:n)) .and. &
                        all(indices_output == c_output(1:n)), 'convolve: the indices of C')
            call expect_same_bits(values, c_values, n, 'convolve: the values of C, bit for bit')
        end if
        call spart_weights_free(convolved)
        line = 1
        status = spart_weights_convolve(context, weights, spart_array_of(line), convolved)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH .and. &
                    .not. c_associated(convolved%handle), &
                    'convolve: a kernel of rank 1 for a 2-D grid refused')
        call expect(index(spart_context_error(context), 'fewer than the 2') > 0, &
                    'convolve: the sentence says why: '//spart_context_error(context))
        kernel(2, 2) = ieee_nan()
        status = spart_weights_convolve(context, weights, spart_array_of(kernel), convolved)
        call expect(status == SPART_ERROR_NOT_FINITE, 'convolve: a NaN kernel value refused')
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine convolved_weights_have_the_bits_of_c

    subroutine gaussian_kernel_has_the_bits_of_c()
        type(spart_context) :: context
        real(c_double) :: kernel(7, 5), empty(0, 3), before(7, 5)
        real(c_double) :: c_applied(84), c_adjoint(84), c_values(CAPACITY), c_gaussian(35)
        integer(c_int64_t) :: c_offsets(2), c_input(CAPACITY), c_output(CAPACITY), entries
        integer(c_int) :: status
        call c_operator(c_applied, c_adjoint, c_offsets, c_input, c_output, c_values, entries, &
                        c_gaussian)
        call expect_status(context, spart_context_create(context), SPART_OK, 'gaussian: context')
        status = spart_psf_gaussian(context, 2.0_c_double, 0.8_c_double, 30.0_c_double, kernel)
        call expect_status(context, status, SPART_OK, 'gaussian: made')
        call expect_same_bits(kernel, c_gaussian, 35, 'gaussian: kernel(7, 5) is C''s [5][7]')
        call expect(all(maxloc(kernel) == [4, 3]), 'gaussian: its centre at (4, 3)')
        call expect(abs(sum(kernel) - 1) <= 1e-15_c_double, 'gaussian: sums to 1')
        before = kernel
        status = spart_psf_gaussian(context, -2.0_c_double, 0.8_c_double, 30.0_c_double, kernel)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, 'gaussian: a negative width refused')
        call expect_same_bits(kernel, before, 35, 'gaussian: the kernel left alone')
        call expect(index(spart_context_error(context), 'sigma_major = -2') > 0, &
                    'gaussian: the sentence names it: '//spart_context_error(context))
        status = spart_psf_gaussian(context, 2.0_c_double, 0.8_c_double, 0.0_c_double, empty)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, 'gaussian: an empty kernel refused')
        call expect(index(spart_context_error(context), 'size = 3 x 0') > 0, &
                    'gaussian: the sentence gives the C size: '//spart_context_error(context))
        call spart_context_free(context)
    end subroutine gaussian_kernel_has_the_bits_of_c

    ! c_reference.c's small instrument with psf(y = 2, x = 3, channel = 2)
    ! = value_at(y, x, channel) / 128.
    function make_instrument(context, instrument, folded, channels) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(out) :: instrument
        logical, intent(in) :: folded
        integer, intent(in) :: channels
        integer(c_int) :: status
        real(c_double) :: wavelength(4), scene_x(7), scene_y(7), sensor(17)
        real(c_double), allocatable :: psf(:, :, :)
        integer :: k, i, j
        do k = 0, 3
            wavelength(k + 1) = 170.97_c_double + 0.02_c_double*k
        end do
        do k = 0, 6
            scene_x(k + 1) = -3.0_c_double + k
            scene_y(k + 1) = -3.0_c_double + k
        end do
        do k = 0, 16
            sensor(k + 1) = k
        end do
        allocate (psf(2, 3, channels))
        do k = 0, channels - 1
            do j = 0, 2
                do i = 0, 1
                    psf(i + 1, j + 1, k + 1) = value_at(i, j, k)/128.0_c_double
                end do
            end do
        end do
        status = spart_instrument_create(context, instrument, angle=[0.0_c_double, 90.0_c_double], &
                                         dispersion=0.01_c_double, plate_scale=1.0_c_double, &
                                         wavelength_ref=171.0_c_double, &
                                         position_ref=[8.0_c_double, 8.0_c_double], &
                                         area_effective=2.0_c_double, &
                                         exposure_time=10.0_c_double, wavelength=wavelength, &
                                         scene_x=scene_x, scene_y=scene_y, sensor_x=sensor, &
                                         sensor_y=sensor, quantum_yield=1.5_c_double, &
                                         read_noise=2.0_c_double, psf=psf, &
                                         psf_mode=merge(SPART_PSF_FOLDED, SPART_PSF_FFT, folded))
    end function make_instrument

    subroutine instrument_with_a_psf_has_the_bits_of_c(folded)
        logical, intent(in) :: folded
        type(spart_context) :: context
        type(spart_instrument) :: instrument, refused
        type(spart_psf) :: psf
        type(spart_mart_regridder_psf), target :: problem
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        real(c_double) :: scene(6, 6, 3), images(16, 16, 2), scenes(6, 6, 3, 2)
        real(c_double) :: c_images(512), c_scenes(216), c_solution(108), c_chi2(8)
        real(c_double), pointer :: chi2(:, :)
        character(kind=c_char) :: sentence(SENTENCE_LENGTH)
        character(len=:), allocatable :: mode
        integer(c_int) :: status
        integer :: i, j, k
        mode = merge('folded PSF: ', 'FFT PSF:    ', folded)
        status = reference_psf_instrument(merge(1_c_int, 0_c_int, folded), c_images, c_scenes, &
                                          c_solution, c_chi2, sentence, &
                                          int(SENTENCE_LENGTH, c_int64_t))
        call expect(status == SPART_OK, mode//'the C reference ran')
        if (status /= SPART_OK) write (*, '(a, a)') '        ', c_sentence(sentence)
        call expect_status(context, spart_context_create(context), SPART_OK, mode//'context')
        status = make_instrument(context, instrument, folded, 2)
        call expect_status(context, status, SPART_OK, mode//'instrument created')
        do k = 0, 2
            do j = 0, 5
                do i = 0, 5
                    scene(i + 1, j + 1, k + 1) = 1e-9_c_double*value_at(i, j, k)
                end do
            end do
        end do
        status = spart_instrument_image(context, instrument, scene, images)
        call expect_status(context, status, SPART_OK, mode//'image')
        call expect_same_bits(images, c_images, 512, mode//'images as in C')
        status = spart_instrument_backproject(context, instrument, images, scenes)
        call expect_status(context, status, SPART_OK, mode//'backproject')
        call expect_same_bits(scenes, c_scenes, 216, mode//'backprojection as in C')
        psf = spart_instrument_psf(instrument)
        call expect(c_associated(psf%handle) .neqv. folded, &
                    mode//'spart_instrument_psf is null exactly when the PSF is folded')
        if (.not. folded) then
            call expect(all(spart_psf_shape_image(psf) == [16, 16, 1, 2]), &
                        mode//'its images are the forward operator''s (16, 16, 1, 2)')
            problem = spart_mart_regridder_psf(c_instrument_forward(instrument), psf%handle, &
                                               c_instrument_backward(instrument), 2_c_int64_t, &
                                               1.5_c_double, 2.0_c_double)
            status = spart_mart_operators_from_regridders_psf(context, problem, operators)
            call expect_status(context, status, SPART_OK, mode//'MART operators')
            status = spart_mart_solve(context, operators, images, result, &
                                      stop_rule=SPART_MART_STOP_COUNT, max_iterations=4_c_int64_t)
            call expect_status(context, status, SPART_OK, mode//'MART')
            call expect_same_bits(spart_mart_result_solution(result), c_solution, 108, &
                                  mode//'MART solution as in C')
            chi2 => spart_mart_result_mean_chi_squared(result)
            call expect_same_bits(chi2, c_chi2, 8, mode//'MART chi2 history as in C')
            call spart_mart_result_free(result)
            call spart_psf_free(psf)
            psf = spart_instrument_psf(instrument)
            call expect(c_associated(psf%handle) .and. &
                        all(spart_psf_shape_kernels(psf) == [2, 3, 1, 2]), &
                        mode//'freeing the borrowed PSF handle leaves the instrument''s')
        end if
        status = make_instrument(context, refused, folded, 3)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH .and. &
                    .not. c_associated(refused%handle), mode//'3 kernels for 2 channels refused')
        call expect(index(spart_context_error(context), 'num_channel = 2') > 0, &
                    mode//'the sentence says why: '//spart_context_error(context))
        call spart_instrument_free(instrument)
        call spart_context_free(context)
    end subroutine instrument_with_a_psf_has_the_bits_of_c

    ! The instrument's regridder handles, as the problem's bind(C) type takes them.
    function c_instrument_forward(instrument) result(handle)
        use, intrinsic :: iso_c_binding, only: c_ptr
        type(spart_instrument), intent(in) :: instrument
        type(c_ptr) :: handle
        type(spart_regridder) :: forward
        forward = spart_instrument_forward(instrument)
        handle = forward%handle
    end function c_instrument_forward

    function c_instrument_backward(instrument) result(handle)
        use, intrinsic :: iso_c_binding, only: c_ptr
        type(spart_instrument), intent(in) :: instrument
        type(c_ptr) :: handle
        type(spart_regridder) :: backward
        backward = spart_instrument_backward(instrument)
        handle = backward%handle
    end function c_instrument_backward
end program test_fortran_psf
