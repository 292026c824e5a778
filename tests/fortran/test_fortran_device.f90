! tests/fortran/test_fortran_device.f90: the GPU from Fortran. Regridders
! moved to the device or assembled there give, on device memory passed by
! address, the bits of the host product; MART over device regridders gives
! the host run's bits. Without a visible device every device call says
! SPART_ERROR_NO_DEVICE with a sentence, and the test exits 77 (skipped),
! or fails when SPART_REQUIRE_GPU=1.
program test_fortran_device
    use, intrinsic :: iso_c_binding, only: c_associated, c_double, c_float, c_int, c_int32_t, &
                                           c_int64_t, c_loc, c_ptr, c_size_t
    use spart
    use spart_test_support
    implicit none

    type(spart_context) :: context
    type(spart_weights) :: weights
    type(spart_regridder) :: host, device
    type(spart_array), allocatable, target :: grid_input(:), grid_output(:)
    integer(c_int) :: status

    call expect_status(context, spart_context_create(context), SPART_OK, 'context')
    status = build_weights(context, CASE_CONSERVATIVE_2D, weights, grid_input, grid_output)
    call expect_status(context, status, SPART_OK, 'weights')
    status = spart_regridder_create(context, weights, host)
    call expect_status(context, status, SPART_OK, 'host regridder')
    status = spart_regridder_to_device(context, host, device)
    if (status == SPART_ERROR_NO_DEVICE) then
        call no_device_everywhere()
    else
        call expect_status(context, status, SPART_OK, 'to_device')
        call device_products_have_the_host_bits()
        call device_mart_has_the_host_bits()
        call device_convolved_has_the_host_bits()
        call device_psf_agrees_with_the_host()
        call device_instrument_has_the_host_bits()
        call device_grids_give_the_host_weights()
    end if
    call spart_regridder_free(device)
    call spart_regridder_free(host)
    call spart_weights_free(weights)
    call spart_context_free(context)
    call finish()

contains

    subroutine no_device_everywhere()
        type(spart_regridder) :: assembled
        real(c_double), target :: kernel(3, 3)
        type(spart_psf) :: psf, psf_device
        type(spart_instrument) :: instrument
        type(spart_weights) :: from_grids
        type(c_ptr) :: memory
        character(len=32) :: required
        integer :: length
        call expect(len(spart_context_error(context)) > 0, 'no device: to_device says why: '// &
                    spart_context_error(context))
        status = spart_regridder_create_device(context, weights, assembled)
        call expect(status == SPART_ERROR_NO_DEVICE, 'no device: create_device says so')
        status = spart_device_malloc(context, 64_c_size_t, memory)
        call expect(status == SPART_ERROR_NO_DEVICE .and. .not. c_associated(memory), &
                    'no device: device_malloc says so')
        call spart_device_free(context, memory)
        kernel = blur_kernel()
        status = spart_regridder_create_device_convolved(context, weights, &
                                                         spart_array_of(kernel), assembled)
        call expect(status == SPART_ERROR_NO_DEVICE, 'no device: create_device_convolved says so')
        status = spart_psf_create(context, spart_array_of(kernel), [6_c_int64_t, 5_c_int64_t], psf)
        call expect_status(context, status, SPART_OK, 'no device: a host PSF')
        status = spart_psf_to_device(context, psf, psf_device)
        call expect(status == SPART_ERROR_NO_DEVICE .and. .not. c_associated(psf_device%handle), &
                    'no device: psf_to_device says so')
        call expect(spart_psf_cuda_device(psf) == -1, 'no device: the PSF is in host memory')
        call spart_psf_free(psf)
        status = small_instrument(.true., instrument)
        call expect(status == SPART_ERROR_NO_DEVICE .and. .not. c_associated(instrument%handle), &
                    'no device: an instrument with on_device says so: '// &
                    spart_context_error(context))
        ! the grids by address: the shapes pass the host's checks, then no device
        status = spart_weights_build_device_grids(context, [c_loc(grid_input(1)%values), &
                                                            c_loc(grid_input(2)%values)], &
                                                  grid_input(1)%dims, &
                                                  [c_loc(grid_output(1)%values), &
                                                   c_loc(grid_output(2)%values)], &
                                                  grid_output(1)%dims, from_grids, &
                                                  method=SPART_METHOD_CONSERVATIVE)
        call expect(status == SPART_ERROR_NO_DEVICE .and. .not. c_associated(from_grids%handle), &
                    'no device: weights from device grids say so: '//spart_context_error(context))
        status = spart_weights_build_device_grids(context, [c_loc(grid_input(1)%values), &
                                                            c_loc(grid_input(2)%values)], &
                                                  grid_input(1)%dims, &
                                                  [c_loc(grid_output(1)%values)], &
                                                  grid_output(1)%dims, from_grids)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, &
                    'device grids: 2 input addresses and 1 output refused: '// &
                    spart_context_error(context))
        call finish()
        required = ''
        call get_environment_variable('SPART_REQUIRE_GPU', required, length)
        if (trim(required) == '1') then
            write (*, '(a)') 'FAILED  SPART_REQUIRE_GPU=1 but no CUDA device is usable'
            error stop 1
        end if
        write (*, '(a)') 'skipped: no CUDA device'
        stop 77
    end subroutine no_device_everywhere

    ! x (7, 5) and a batch (7, 5, 3) through device memory.
    subroutine device_products_have_the_host_bits()
        type(spart_regridder) :: assembled, back_on_host
        real(c_double), target :: x(7, 5, 3), y(6, 4, 3), y_host(6, 4, 3)
        integer(c_int64_t), pointer :: row_ptr(:), columns64(:)
        integer(c_int32_t), pointer :: columns32(:)
        real(c_double), pointer :: values(:)
        real(c_float), pointer :: values32(:)
        type(c_ptr) :: x_device, y_device
        integer :: i, j, b
        do b = 1, 3
            do j = 0, 4
                do i = 0, 6
                    x(i + 1, j + 1, b) = b*value_at(i, j, 0)
                end do
            end do
        end do
        status = spart_regridder_apply(context, host, x, y_host)
        call expect_status(context, status, SPART_OK, 'host product of a batch')
        call expect(spart_regridder_cuda_device(device) >= 0, 'the copy is on a device')

        status = spart_device_malloc(context, 8*size(x, kind=c_size_t), x_device)
        call expect_status(context, status, SPART_OK, 'device memory for x')
        status = spart_device_malloc(context, 8*size(y, kind=c_size_t), y_device)
        call expect_status(context, status, SPART_OK, 'device memory for y')
        status = spart_device_copy_to_device(context, x_device, c_loc(x), 8*size(x, kind=c_size_t))
        call expect_status(context, status, SPART_OK, 'x to the device')

        y = 0
        status = spart_regridder_apply_pointer(context, device, x_device, [7_c_int64_t, &
                                                                            5_c_int64_t], &
                                               y_device, 24_c_int64_t)
        call expect_status(context, status, SPART_OK, 'device product of a vector')
        status = spart_device_copy_to_host(context, c_loc(y), y_device, 8*24_c_size_t)
        call expect_same_bits(y(:, :, 1), y_host(:, :, 1), 24, 'a vector: the host bits')

        y = 0
        status = spart_regridder_apply_pointer(context, device, x_device, [7_c_int64_t, &
                                                                            5_c_int64_t, &
                                                                            3_c_int64_t], &
                                               y_device, 72_c_int64_t)
        call expect_status(context, status, SPART_OK, 'device product of a batch')
        status = spart_device_copy_to_host(context, c_loc(y), y_device, 8*72_c_size_t)
        call expect_same_bits(y, y_host, 72, 'a batch: the host bits')

        status = spart_regridder_create_device(context, weights, assembled)
        call expect_status(context, status, SPART_OK, 'assembled on the device')
        y = 0
        status = spart_regridder_apply_pointer(context, assembled, x_device, [7_c_int64_t, &
                                                                               5_c_int64_t, &
                                                                               3_c_int64_t], &
                                               y_device, 72_c_int64_t)
        status = spart_device_copy_to_host(context, c_loc(y), y_device, 8*72_c_size_t)
        call expect_same_bits(y, y_host, 72, 'assembled on the device: the host bits')

        status = spart_regridder_apply(context, device, x, y)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, &
                    'host arrays refused by a device regridder: '//spart_context_error(context))
        status = spart_regridder_csr(device, row_ptr, columns32, columns64, values, values32)
        call expect(status == SPART_ERROR_NOT_IMPLEMENTED .and. .not. associated(row_ptr), &
                    'no Fortran pointers into device memory')

        status = spart_regridder_to_host(context, assembled, back_on_host)
        call expect_status(context, status, SPART_OK, 'back to the host')
        y = 0
        status = spart_regridder_apply(context, back_on_host, x, y)
        call expect_same_bits(y, y_host, 72, 'back on the host: the same bits')

        call spart_regridder_free(back_on_host)
        call spart_regridder_free(assembled)
        call spart_device_free(context, y_device)
        call spart_device_free(context, x_device)
        call expect(.not. c_associated(x_device), 'device_free nulls the pointer')
    end subroutine device_products_have_the_host_bits

    ! MART over device regridders (observed in device memory) gives the
    ! states and merits of the host run.
    subroutine device_mart_has_the_host_bits()
        type(spart_weights) :: pair_weights, transposed
        type(spart_regridder) :: forward, backward, forward_device, backward_device
        type(spart_mart_regridder_pair), target :: pair, pair_device
        type(spart_mart_operators) :: operators, operators_device
        type(spart_mart_result) :: result, result_device
        real(c_double), target :: observed(8, 3)
        real(c_double), pointer :: solution(:), solution_device(:), chi2(:, :), chi2_device(:, :)
        type(c_ptr) :: observed_device
        call make_pair(context, pair_weights, transposed, forward, backward)
        call observe_pair(context, forward, observed)
        pair = spart_mart_regridder_pair(forward%handle, backward%handle, 3_c_int64_t, &
                                         1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair, operators)
        status = spart_mart_solve(context, operators, observed, result, &
                                  stop_rule=SPART_MART_STOP_COUNT, max_iterations=8_c_int64_t)
        call expect_status(context, status, SPART_OK, 'MART on the host')

        status = spart_regridder_to_device(context, forward, forward_device)
        status = spart_regridder_to_device(context, backward, backward_device)
        pair_device = spart_mart_regridder_pair(forward_device%handle, backward_device%handle, &
                                                3_c_int64_t, 1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair_device, operators_device)
        call expect_status(context, status, SPART_OK, 'MART operators on the device')
        call expect(operators_device%on_device /= 0, 'the operators say they are on the device')
        status = spart_mart_solve(context, operators_device, observed, result_device)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, &
                    'host observed refused for device operators: '//spart_context_error(context))
        status = spart_device_malloc(context, 8*24_c_size_t, observed_device)
        status = spart_device_copy_to_device(context, observed_device, c_loc(observed), &
                                             8*24_c_size_t)
        status = spart_mart_solve_pointer(context, operators_device, observed_device, &
                                          result_device, stop_rule=SPART_MART_STOP_COUNT, &
                                          max_iterations=8_c_int64_t)
        call expect_status(context, status, SPART_OK, 'MART on the device')
        solution => spart_mart_result_solution(result)
        solution_device => spart_mart_result_solution(result_device)
        chi2 => spart_mart_result_mean_chi_squared(result)
        chi2_device => spart_mart_result_mean_chi_squared(result_device)
        if (associated(solution_device) .and. associated(chi2_device)) then
            call expect_same_bits(solution_device, solution, 12, 'MART: the host solution')
            call expect_same_bits(chi2_device, chi2, 24, 'MART: the host merits')
        end if
        call spart_device_free(context, observed_device)
        call spart_mart_result_free(result_device)
        call spart_mart_result_free(result)
        call spart_regridder_free(backward_device)
        call spart_regridder_free(forward_device)
        call spart_regridder_free(backward)
        call spart_regridder_free(forward)
        call spart_weights_free(transposed)
        call spart_weights_free(pair_weights)
    end subroutine device_mart_has_the_host_bits

    ! A 3 x 3 blur, off-centre so that a transposed kernel would show.
    function blur_kernel() result(kernel)
        real(c_double), target :: kernel(3, 3)
        kernel = reshape([0.05_c_double, 0.1_c_double, 0.0_c_double, 0.1_c_double, &
                          0.5_c_double, 0.05_c_double, 0.0_c_double, 0.15_c_double, &
                          0.05_c_double], [3, 3])
    end function blur_kernel

    ! Weights with a kernel folded in on the device give, for a batch in
    ! device memory, the bits of the host regridder of the host-convolved
    ! weights.
    subroutine device_convolved_has_the_host_bits()
        type(spart_weights) :: convolved
        type(spart_regridder) :: host_convolved, device_convolved
        real(c_double), target :: kernel(3, 3), x(7, 5, 3), y(6, 4, 3), y_host(6, 4, 3)
        type(c_ptr) :: x_device, y_device
        integer :: i, j, b
        kernel = blur_kernel()
        do b = 1, 3
            do j = 0, 4
                do i = 0, 6
                    x(i + 1, j + 1, b) = b*value_at(i, j, 0)
                end do
            end do
        end do
        status = spart_weights_convolve(context, weights, spart_array_of(kernel), convolved)
        call expect_status(context, status, SPART_OK, 'weights convolved on the host')
        status = spart_regridder_create(context, convolved, host_convolved)
        call expect_status(context, status, SPART_OK, 'host regridder of the convolved weights')
        status = spart_regridder_apply(context, host_convolved, x, y_host)
        call expect_status(context, status, SPART_OK, 'host product, convolved')

        status = spart_regridder_create_device_convolved(context, weights, &
                                                         spart_array_of(kernel), device_convolved)
        call expect_status(context, status, SPART_OK, 'convolved and assembled on the device')
        status = spart_device_malloc(context, 8*size(x, kind=c_size_t), x_device)
        status = spart_device_malloc(context, 8*size(y, kind=c_size_t), y_device)
        status = spart_device_copy_to_device(context, x_device, c_loc(x), 8*size(x, kind=c_size_t))
        y = 0
        status = spart_regridder_apply_pointer(context, device_convolved, x_device, &
                                               [7_c_int64_t, 5_c_int64_t, 3_c_int64_t], &
                                               y_device, 72_c_int64_t)
        call expect_status(context, status, SPART_OK, 'device product, convolved')
        status = spart_device_copy_to_host(context, c_loc(y), y_device, 8*72_c_size_t)
        call expect_same_bits(y, y_host, 72, 'convolved on the device: the host bits')
        call spart_device_free(context, y_device)
        call spart_device_free(context, x_device)
        call spart_regridder_free(device_convolved)
        call spart_regridder_free(host_convolved)
        call spart_weights_free(convolved)
    end subroutine device_convolved_has_the_host_bits

    ! The PSF operator copied to the device gives, on device memory, the
    ! host operator's images to the FFTs' rounding (cuFFT and FFTW are not
    ! the same bits): within 1e-12 of max|in| times the kernel's sum.
    subroutine device_psf_agrees_with_the_host()
        type(spart_psf) :: psf, psf_device
        real(c_double), target :: kernel(3, 3), images(6, 5, 2), host_out(6, 5, 2)
        real(c_double), target :: device_out(6, 5, 2)
        type(c_ptr) :: images_device, out_device
        integer :: i, j, b
        kernel = blur_kernel()
        do b = 1, 2
            do j = 0, 4
                do i = 0, 5
                    images(i + 1, j + 1, b) = b*value_at(i, j, 0)
                end do
            end do
        end do
        status = spart_psf_create(context, spart_array_of(kernel), &
                                  [6_c_int64_t, 5_c_int64_t, 2_c_int64_t], psf)
        call expect_status(context, status, SPART_OK, 'psf on the host')
        status = spart_psf_apply(context, psf, images, host_out)
        call expect_status(context, status, SPART_OK, 'psf applied on the host')
        status = spart_psf_to_device(context, psf, psf_device)
        call expect_status(context, status, SPART_OK, 'psf to the device')
        call expect(spart_psf_cuda_device(psf_device) >= 0, 'the PSF copy is on a device')
        status = spart_device_malloc(context, 8*60_c_size_t, images_device)
        status = spart_device_malloc(context, 8*60_c_size_t, out_device)
        status = spart_device_copy_to_device(context, images_device, c_loc(images), 8*60_c_size_t)
        status = spart_psf_apply_pointer(context, psf_device, images_device, &
                                         [6_c_int64_t, 5_c_int64_t, 2_c_int64_t], out_device, &
                                         60_c_int64_t)
        call expect_status(context, status, SPART_OK, 'psf applied on the device')
        status = spart_device_copy_to_host(context, c_loc(device_out), out_device, 8*60_c_size_t)
        call expect(maxval(abs(device_out - host_out)) <= &
                    1e-12_c_double*maxval(abs(images))*sum(abs(kernel)), &
                    'psf on the device: the host images to rounding')
        call spart_device_free(context, out_device)
        call spart_device_free(context, images_device)
        call spart_psf_free(psf_device)
        call spart_psf_free(psf)
    end subroutine device_psf_agrees_with_the_host

    ! Weights from the same grids copied to device memory
    ! (spart_weights_build_device_grids, device addresses with their
    ! extents), assembled on the device: the host regridder's products bit
    ! for bit.
    subroutine device_grids_give_the_host_weights()
        type(spart_weights) :: from_grids, refused
        type(spart_regridder) :: assembled
        type(c_ptr) :: grids(4), x_device, y_device
        real(c_double), target :: x(7, 5), y(6, 4), y_host(6, 4)
        integer :: k, i, j
        do k = 1, 4
            if (k <= 2) then
                status = spart_device_malloc(context, 8*size(grid_input(k)%values, kind=c_size_t), &
                                             grids(k))
                if (status == SPART_OK) &
                    status = spart_device_copy_to_device(context, grids(k), &
                                                         c_loc(grid_input(k)%values), &
                                                         8*size(grid_input(k)%values, &
                                                                kind=c_size_t))
            else
                status = spart_device_malloc(context, &
                                             8*size(grid_output(k - 2)%values, kind=c_size_t), &
                                             grids(k))
                if (status == SPART_OK) &
                    status = spart_device_copy_to_device(context, grids(k), &
                                                         c_loc(grid_output(k - 2)%values), &
                                                         8*size(grid_output(k - 2)%values, &
                                                                kind=c_size_t))
            end if
            call expect_status(context, status, SPART_OK, 'a grid to the device')
        end do
        status = spart_weights_build_device_grids(context, grids(1:2), grid_input(1)%dims, &
                                                  grids(3:4), grid_output(1)%dims, from_grids, &
                                                  method=SPART_METHOD_CONSERVATIVE, &
                                                  algorithm=SPART_ALGORITHM_CLIP)
        call expect_status(context, status, SPART_OK, 'weights from device grids')
        status = spart_weights_build_device_grids(context, [c_loc(grid_input(1)%values), &
                                                            c_loc(grid_input(2)%values)], &
                                                  grid_input(1)%dims, grids(3:4), &
                                                  grid_output(1)%dims, refused)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, &
                    'host addresses refused by name: '//spart_context_error(context))
        status = spart_regridder_create_device(context, from_grids, assembled)
        call expect_status(context, status, SPART_OK, 'assembled from device-grid weights')
        do j = 0, 4
            do i = 0, 6
                x(i + 1, j + 1) = value_at(i, j, 0)
            end do
        end do
        status = spart_regridder_apply(context, host, x, y_host)
        call expect_status(context, status, SPART_OK, 'host product')
        status = spart_device_malloc(context, 8*size(x, kind=c_size_t), x_device)
        call expect_status(context, status, SPART_OK, 'device x')
        status = spart_device_malloc(context, 8*size(y, kind=c_size_t), y_device)
        call expect_status(context, status, SPART_OK, 'device y')
        status = spart_device_copy_to_device(context, x_device, c_loc(x), 8*size(x, kind=c_size_t))
        y = 0
        status = spart_regridder_apply_pointer(context, assembled, x_device, &
                                               [7_c_int64_t, 5_c_int64_t], y_device, &
                                               size(y, kind=c_int64_t))
        call expect_status(context, status, SPART_OK, 'product of the device-grid weights')
        status = spart_device_copy_to_host(context, c_loc(y), y_device, 8*size(y, kind=c_size_t))
        call expect_same_bits(y, y_host, size(y), 'weights from device grids: the host bits')
        call spart_regridder_free(assembled)
        call spart_weights_free(from_grids)
        call spart_device_free(context, x_device)
        call spart_device_free(context, y_device)
        do k = 1, 4
            call spart_device_free(context, grids(k))
        end do
    end subroutine device_grids_give_the_host_weights

    ! c_reference.c's small instrument (test_fortran_mart's), built on the
    ! host or, with on_device, on the context's device.
    function small_instrument(on_device, instrument) result(status)
        logical, intent(in) :: on_device
        type(spart_instrument), intent(out) :: instrument
        integer(c_int) :: status
        real(c_double) :: wavelength(4), scene_x(7), sensor(17)
        integer :: k
        do k = 0, 3
            wavelength(k + 1) = 170.97_c_double + 0.02_c_double*k
        end do
        do k = 0, 6
            scene_x(k + 1) = -3.0_c_double + k
        end do
        do k = 0, 16
            sensor(k + 1) = k
        end do
        status = spart_instrument_create(context, instrument, angle=[0.0_c_double, 90.0_c_double], &
                                         dispersion=0.01_c_double, plate_scale=1.0_c_double, &
                                         wavelength_ref=171.0_c_double, &
                                         position_ref=[8.0_c_double, 8.0_c_double], &
                                         area_effective=2.0_c_double, &
                                         exposure_time=10.0_c_double, wavelength=wavelength, &
                                         scene_x=scene_x, scene_y=scene_x, sensor_x=sensor, &
                                         sensor_y=sensor, on_device=on_device)
    end function small_instrument

    ! An instrument built with on_device = .true.: its forward operator is
    ! on the device and images a scene (through device memory) with the
    ! host-built instrument's bits.
    subroutine device_instrument_has_the_host_bits()
        type(spart_instrument) :: on_host, on_device
        real(c_double), target :: scene(6, 6, 3), images(16, 16, 2), images_host(16, 16, 2)
        type(c_ptr) :: scene_device, images_device
        integer :: i, j, k
        status = small_instrument(.false., on_host)
        call expect_status(context, status, SPART_OK, 'instrument on the host')
        status = small_instrument(.true., on_device)
        call expect_status(context, status, SPART_OK, 'instrument with on_device')
        call expect(spart_regridder_cuda_device(spart_instrument_forward(on_device)) >= 0, &
                    'the instrument''s forward operator is on the device')
        call expect(spart_regridder_cuda_device(spart_instrument_forward(on_host)) == -1, &
                    'the host instrument''s is on the host')
        do k = 0, 2
            do j = 0, 5
                do i = 0, 5
                    scene(i + 1, j + 1, k + 1) = value_at(i, j, k)
                end do
            end do
        end do
        status = spart_regridder_apply(context, spart_instrument_forward(on_host), scene, &
                                       images_host)
        call expect_status(context, status, SPART_OK, 'host instrument: images')
        status = spart_device_malloc(context, 8*size(scene, kind=c_size_t), scene_device)
        call expect_status(context, status, SPART_OK, 'device memory for the scene')
        status = spart_device_malloc(context, 8*size(images, kind=c_size_t), images_device)
        call expect_status(context, status, SPART_OK, 'device memory for the images')
        status = spart_device_copy_to_device(context, scene_device, c_loc(scene), &
                                             8*size(scene, kind=c_size_t))
        call expect_status(context, status, SPART_OK, 'the scene to the device')
        images = 0
        status = spart_regridder_apply_pointer(context, spart_instrument_forward(on_device), &
                                               scene_device, [6_c_int64_t, 6_c_int64_t, &
                                                              3_c_int64_t], &
                                               images_device, size(images, kind=c_int64_t))
        call expect_status(context, status, SPART_OK, 'device instrument: images')
        status = spart_device_copy_to_host(context, c_loc(images), images_device, &
                                           8*size(images, kind=c_size_t))
        call expect_same_bits(images, images_host, size(images), &
                              'device instrument: the host instrument''s bits')
        call spart_device_free(context, scene_device)
        call spart_device_free(context, images_device)
        call spart_instrument_free(on_device)
        call spart_instrument_free(on_host)
    end subroutine device_instrument_has_the_host_bits
end program test_fortran_device
