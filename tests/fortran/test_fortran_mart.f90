! tests/fortran/test_fortran_mart.f90: MART and the ideal instrument from
! Fortran give the same bits as from C (c_reference.c): a run over a pair of
! Regridders, the instrument's images, backprojection, seeded observations
! and a run over its operators, and the Gaussian scene. Operators and a
! progress callback written in Fortran drive the C driver; sizes the C
! functions cannot see are checked, with sentences.

! Callbacks written in Fortran (bind(C), as the C driver calls them).
module mart_test_callbacks
    use, intrinsic :: iso_c_binding, only: c_double, c_f_pointer, c_f_procpointer, c_int, &
                                           c_int64_t, c_ptr
    use spart
    implicit none
    private
    public :: delegating_state, delegating_forward, delegating_backward, progress_log
    public :: stop_at_iteration_three

    ! What the delegating operators carry through `user`: the operators
    ! they hand the work to, and how often they were called.
    type, bind(C) :: delegating_state
        type(spart_mart_operators) :: delegate
        integer(c_int) :: forward_calls
        integer(c_int) :: backward_calls
        integer(c_int) :: threads_seen
    end type delegating_state

    ! What the progress callback saw.
    type, bind(C) :: progress_log
        integer(c_int) :: calls
        real(c_double) :: last_merit
        real(c_double) :: last_mean_of_chi2
    end type progress_log

contains

    ! The forward operator: counts the call, checks that the context it is
    ! given works from Fortran, and hands the work to the delegate.
    function delegating_forward(user, context, scene, images, widths) bind(C) result(status)
        type(c_ptr), value :: user, context, scene, images, widths
        integer(c_int) :: status
        type(delegating_state), pointer :: state
        procedure(spart_mart_forward_function), pointer :: forward
        type(spart_context) :: wrapped
        call c_f_pointer(user, state)
        state%forward_calls = state%forward_calls + 1
        wrapped%handle = context
        state%threads_seen = spart_context_threads(wrapped)
        call c_f_procpointer(state%delegate%forward, forward)
        status = forward(state%delegate%user, context, scene, images, widths)
    end function delegating_forward

    function delegating_backward(user, context, images, scenes) bind(C) result(status)
        type(c_ptr), value :: user, context, images, scenes
        integer(c_int) :: status
        type(delegating_state), pointer :: state
        procedure(spart_mart_backward_function), pointer :: backward
        call c_f_pointer(user, state)
        state%backward_calls = state%backward_calls + 1
        call c_f_procpointer(state%delegate%backward, backward)
        status = backward(state%delegate%user, context, images, scenes)
    end function delegating_backward

    ! Stops the run at iteration 3 (the fourth merit); records the merits.
    function stop_at_iteration_three(user, progress) bind(C) result(stop)
        type(c_ptr), value :: user
        type(spart_mart_progress), intent(in) :: progress
        integer(c_int) :: stop
        type(progress_log), pointer :: log
        real(c_double), pointer :: chi2(:)
        call c_f_pointer(user, log)
        call c_f_pointer(progress%mean_chi_squared, chi2, [progress%num_channel])
        log%calls = log%calls + 1
        log%last_merit = progress%merit
        log%last_mean_of_chi2 = sum(chi2)/real(progress%num_channel, c_double)
        stop = 0
        if (progress%iteration == 3_c_int64_t) stop = 1
    end function stop_at_iteration_three
end module mart_test_callbacks

program test_fortran_mart
    use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_double, c_funloc, c_int, &
                                           c_int64_t, c_loc, c_size_t
    use spart
    use spart_test_support
    use mart_test_callbacks
    implicit none

    integer, parameter :: PACKED_CAPACITY = 20000

    call pair_run_has_the_bits_of_c()
    call fortran_operators_drive_the_c_driver()
    call a_progress_callback_stops_the_run()
    call sizes_the_driver_cannot_see_are_checked()
    call building_blocks_repeat_the_driver()
    call instrument_products_have_the_bits_of_c()
    call instrument_run_has_the_bits_of_c()
    call lines_give_the_one_line_bits()
    call finish()

contains

    ! The C run `which`, packed, and its message.
    subroutine c_run(which, packed, message)
        integer(c_int), intent(in) :: which
        real(c_double), allocatable, intent(out) :: packed(:)
        character(len=:), allocatable, intent(out) :: message
        real(c_double), allocatable :: buffer(:)
        character(kind=c_char) :: message_buffer(SENTENCE_LENGTH), sentence(SENTENCE_LENGTH)
        integer(c_int64_t) :: count
        integer(c_int) :: status
        allocate (buffer(PACKED_CAPACITY))
        status = reference_mart(which, buffer, int(PACKED_CAPACITY, c_int64_t), count, &
                                message_buffer, int(SENTENCE_LENGTH, c_int64_t), sentence, &
                                int(SENTENCE_LENGTH, c_int64_t))
        call expect(status == SPART_OK .and. count > 0, 'the C run')
        if (status /= SPART_OK) write (*, '(a, a)') '        ', c_sentence(sentence)
        packed = buffer(1:max(count, 0_c_int64_t))
        message = c_sentence(message_buffer)
    end subroutine c_run

    subroutine expect_same_run(result, which, what)
        type(spart_mart_result), intent(in) :: result
        integer(c_int), intent(in) :: which
        character(len=*), intent(in) :: what
        real(c_double), allocatable :: mine(:), theirs(:)
        character(len=:), allocatable :: message
        call c_run(which, theirs, message)
        allocate (mine, source=packed_result(result))
        call expect(size(mine) == size(theirs), what//': as many iterations and states as C')
        if (size(mine) == size(theirs)) then
            call expect_same_bits(mine, theirs, size(mine), &
                                  what//': solution, merits and states, bit for bit')
        end if
        call expect(spart_mart_result_message(result) == message, what//': the message of C: '// &
                    message)
    end subroutine expect_same_run

    subroutine pair_run_has_the_bits_of_c()
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: forward, backward
        type(spart_mart_regridder_pair), target :: pair
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        real(c_double) :: observed(8, 3)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, 'pair: context')
        call make_pair(context, weights, transposed, forward, backward)
        call observe_pair(context, forward, observed)
        pair = spart_mart_regridder_pair(forward%handle, backward%handle, 3_c_int64_t, &
                                         1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair, operators)
        call expect_status(context, status, SPART_OK, 'pair: MART operators')
        call expect(operators%num_channel == 3 .and. operators%scene_size == 12 .and. &
                    operators%image_size == 8, 'pair: 3 channels, scenes of 12, images of 8')
        status = spart_mart_solve(context, operators, observed, result, &
                                  stop_rule=SPART_MART_STOP_COUNT, max_iterations=8_c_int64_t, &
                                  keep_intermediate=.true.)
        call expect_status(context, status, SPART_OK, 'pair: MART')
        call expect(spart_mart_result_num_iterations(result) == 8 .and. &
                    spart_mart_result_num_solutions(result) == 8 .and. &
                    spart_mart_result_success(result), 'pair: 8 iterations, 8 states, a success')
        call expect(size(spart_mart_result_mean_chi_squared(result), 1) == 3, &
                    'pair: histories of (channel, iteration)')
        call expect_same_run(result, 1, 'pair')
        call spart_mart_result_free(result)
        call spart_mart_result_free(result)
        call spart_regridder_free(backward)
        call spart_regridder_free(forward)
        call spart_weights_free(transposed)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine pair_run_has_the_bits_of_c

    ! Operators written in Fortran (here handing the work to the pair's) are
    ! called by the driver and give the run of the pair itself.
    subroutine fortran_operators_drive_the_c_driver()
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: forward, backward
        type(spart_mart_regridder_pair), target :: pair
        type(delegating_state), target :: state
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        real(c_double) :: observed(8, 3)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, 'callbacks: context')
        call make_pair(context, weights, transposed, forward, backward)
        call observe_pair(context, forward, observed)
        pair = spart_mart_regridder_pair(forward%handle, backward%handle, 3_c_int64_t, &
                                         1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair, state%delegate)
        state%forward_calls = 0
        state%backward_calls = 0
        state%threads_seen = 0
        operators = state%delegate
        operators%forward = c_funloc(delegating_forward)
        operators%backward = c_funloc(delegating_backward)
        operators%user = c_loc(state)
        status = spart_mart_solve(context, operators, observed, result, &
                                  stop_rule=SPART_MART_STOP_COUNT, max_iterations=8_c_int64_t, &
                                  keep_intermediate=.true.)
        call expect_status(context, status, SPART_OK, 'callbacks: MART over Fortran operators')
        call expect(state%forward_calls == 8 .and. state%backward_calls == 9, &
                    'callbacks: forward called 8 times, backward 9 (once for the observed)')
        call expect(state%threads_seen >= 1, 'callbacks: the context works inside a callback')
        call expect_same_run(result, 1, 'callbacks')
        call spart_mart_result_free(result)
        call spart_regridder_free(backward)
        call spart_regridder_free(forward)
        call spart_weights_free(transposed)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine fortran_operators_drive_the_c_driver

    subroutine a_progress_callback_stops_the_run()
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: forward, backward
        type(spart_mart_regridder_pair), target :: pair
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        type(progress_log), target :: log
        real(c_double), pointer :: chi2(:, :)
        real(c_double) :: observed(8, 3)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, 'progress: context')
        call make_pair(context, weights, transposed, forward, backward)
        call observe_pair(context, forward, observed)
        pair = spart_mart_regridder_pair(forward%handle, backward%handle, 3_c_int64_t, &
                                         1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair, operators)
        log%calls = 0
        status = spart_mart_solve(context, operators, observed, result, &
                                  stop_rule=SPART_MART_STOP_COUNT, max_iterations=8_c_int64_t, &
                                  callback=stop_at_iteration_three, callback_user=c_loc(log))
        call expect_status(context, status, SPART_OK, 'progress: MART with a callback')
        call expect(log%calls == 4 .and. spart_mart_result_num_iterations(result) == 4, &
                    'progress: called 4 times, stopped after the fourth merit')
        call expect(.not. spart_mart_result_success(result), 'progress: not a success')
        call expect(index(spart_mart_result_message(result), 'callback') > 0, &
                    'progress: the message says so: '//spart_mart_result_message(result))
        chi2 => spart_mart_result_mean_chi_squared(result)
        call expect(abs(log%last_mean_of_chi2 - sum(chi2(:, 4))/3) <= &
                    1e-15_c_double*abs(log%last_merit) .and. &
                    abs(log%last_merit - log%last_mean_of_chi2) <= 1e-15_c_double*log%last_merit, &
                    'progress: the callback saw the merits the result keeps')
        call spart_mart_result_free(result)
        call spart_regridder_free(backward)
        call spart_regridder_free(forward)
        call spart_weights_free(transposed)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine a_progress_callback_stops_the_run

    subroutine sizes_the_driver_cannot_see_are_checked()
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: forward, backward
        type(spart_mart_regridder_pair), target :: pair
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        real(c_double) :: observed(8, 3), guess(11)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, 'sizes: context')
        call make_pair(context, weights, transposed, forward, backward)
        call observe_pair(context, forward, observed)
        pair = spart_mart_regridder_pair(forward%handle, backward%handle, 3_c_int64_t, &
                                         1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair, operators)
        status = spart_mart_solve(context, operators, observed(1:7, :), result)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'sizes: 21 observed values refused')
        call expect(spart_context_error(context) == 'mart: observed holds 21 values, but the '// &
                    'operators take 3 channels x 8 values per image = 24', &
                    'sizes: the sentence gives both sizes')
        guess = 1
        status = spart_mart_solve(context, operators, observed, result, guess=guess)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH .and. &
                    .not. c_associated(result%handle), 'sizes: a guess of 11 values refused')
        call expect(spart_context_error(context) == 'mart: guess holds 11 values, but a scene '// &
                    'of the operators holds 12', 'sizes: the sentence gives both sizes')
        pair%num_channel = 0
        status = spart_mart_operators_from_regridders(context, pair, operators)
        call expect(status == SPART_ERROR_INVALID_ARGUMENT, 'sizes: 0 channels refused by C')
        call expect(index(spart_context_error(context), 'num_channel') > 0, &
                    'sizes: with its sentence: '//spart_context_error(context))
        call spart_regridder_free(backward)
        call spart_regridder_free(forward)
        call spart_weights_free(transposed)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine sizes_the_driver_cannot_see_are_checked

    ! Three iterations written in Fortran with the building blocks (by
    ! address, host memory) give the driver's states and merits, bit for bit.
    subroutine building_blocks_repeat_the_driver()
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: forward, backward
        type(spart_mart_regridder_pair), target :: pair
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        real(c_double), target :: observed(8, 3), predicted(8, 3), widths(8, 3)
        real(c_double), target :: observed_back(12, 3), predicted_back(12, 3), scene(12)
        real(c_double), allocatable, target :: workspace(:)
        real(c_double), pointer :: history(:, :)
        real(c_double) :: chi2(3), correlation(3)
        integer(c_size_t) :: bytes
        integer(c_int) :: status
        integer :: iteration
        call expect_status(context, spart_context_create(context), SPART_OK, 'blocks: context')
        call make_pair(context, weights, transposed, forward, backward)
        call observe_pair(context, forward, observed)
        pair = spart_mart_regridder_pair(forward%handle, backward%handle, 3_c_int64_t, &
                                         1.5_c_double, 0.5_c_double)
        status = spart_mart_operators_from_regridders(context, pair, operators)
        status = spart_mart_solve(context, operators, observed, result, &
                                  stop_rule=SPART_MART_STOP_COUNT, max_iterations=3_c_int64_t, &
                                  keep_intermediate=.true.)
        call expect_status(context, status, SPART_OK, 'blocks: the driver')
        history => spart_mart_result_mean_chi_squared(result)

        bytes = spart_mart_workspace_size(3_c_int64_t, 8_c_int64_t, 12_c_int64_t)
        allocate (workspace(bytes/8 + 1))
        status = spart_regridder_apply(context, backward, observed, observed_back)
        status = spart_mart_flat_guess(context, c_loc(observed_back), 3_c_int64_t, &
                                       12_c_int64_t, c_loc(scene), c_loc(workspace), bytes)
        call expect_status(context, status, SPART_OK, 'blocks: flat guess')
        status = spart_mart_clamp(context, c_loc(observed_back), 36_c_int64_t)
        call expect_status(context, status, SPART_OK, 'blocks: clamp')
        do iteration = 1, 3
            call expect_same_bits(scene, spart_mart_result_solutions(result, &
                                                                     int(iteration - 1, &
                                                                         c_int64_t)), 12, &
                                  'blocks: the state at the start of an iteration')
            status = spart_regridder_apply(context, forward, scene, predicted)
            status = spart_mart_noise_widths(context, c_loc(predicted), c_loc(widths), &
                                             24_c_int64_t, 1.5_c_double, 0.5_c_double)
            call expect_status(context, status, SPART_OK, 'blocks: noise widths')
            status = spart_mart_merits(context, c_loc(observed), c_loc(predicted), c_loc(widths), &
                                       3_c_int64_t, 8_c_int64_t, chi2, correlation, &
                                       c_loc(workspace), bytes)
            call expect_status(context, status, SPART_OK, 'blocks: merits')
            call expect_same_bits(chi2, history(:, iteration), 3, 'blocks: the merits of C')
            status = spart_regridder_apply(context, backward, predicted, predicted_back)
            status = spart_mart_update(context, c_loc(scene), c_loc(observed_back), &
                                       c_loc(predicted_back), 3_c_int64_t, 12_c_int64_t, &
                                       spart_mart_result_gamma(result))
            call expect_status(context, status, SPART_OK, 'blocks: update')
        end do
        ! The driver's solution after its last update (without the states
        ! kept: with them, as ctis, it is the state at the start of the last
        ! iteration).
        call spart_mart_result_free(result)
        status = spart_mart_solve(context, operators, observed, result, &
                                  stop_rule=SPART_MART_STOP_COUNT, max_iterations=3_c_int64_t)
        call expect_same_bits(scene, spart_mart_result_solution(result), 12, &
                              'blocks: the solution after three updates')
        status = spart_mart_merits(context, c_loc(observed), c_loc(predicted), c_loc(widths), &
                                   3_c_int64_t, 8_c_int64_t, chi2(1:2), correlation, &
                                   c_loc(workspace), bytes)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'blocks: chi2 of 2 for 3 channels')
        call spart_mart_result_free(result)
        call spart_regridder_free(backward)
        call spart_regridder_free(forward)
        call spart_weights_free(transposed)
        call spart_weights_free(weights)
        call spart_context_free(context)
    end subroutine building_blocks_repeat_the_driver

    ! c_reference.c's small instrument, in Fortran order.
    function make_instrument(context, instrument) result(status)
        type(spart_context), intent(in) :: context
        type(spart_instrument), intent(out) :: instrument
        integer(c_int) :: status
        real(c_double) :: wavelength(4), scene_x(7), scene_y(7), sensor(17)
        integer :: k
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
        status = spart_instrument_create(context, instrument, angle=[0.0_c_double, 90.0_c_double], &
                                         dispersion=0.01_c_double, plate_scale=1.0_c_double, &
                                         wavelength_ref=171.0_c_double, &
                                         position_ref=[8.0_c_double, 8.0_c_double], &
                                         area_effective=2.0_c_double, &
                                         exposure_time=10.0_c_double, wavelength=wavelength, &
                                         scene_x=scene_x, scene_y=scene_y, sensor_x=sensor, &
                                         sensor_y=sensor, quantum_yield=1.5_c_double, &
                                         read_noise=2.0_c_double)
    end function make_instrument

    ! One line given through line_bins / line_wavelength (and streamed
    ! within a memory budget) images as the one-line instrument, bit for
    ! bit; mismatched line arrays are refused before C sees them.
    subroutine lines_give_the_one_line_bits()
        type(spart_context) :: context
        type(spart_instrument) :: plain, as_line
        real(c_double) :: wavelength(4), scene_x(7), sensor(17), scene(6, 6, 3)
        real(c_double) :: images(16, 16, 2), line_images(16, 16, 2), widths(16, 16, 2)
        integer(c_int) :: status
        integer :: k
        call expect_status(context, spart_context_create(context), SPART_OK, 'lines: context')
        status = make_instrument(context, plain)
        call expect_status(context, status, SPART_OK, 'lines: the one-line instrument')
        do k = 0, 3
            wavelength(k + 1) = 170.97_c_double + 0.02_c_double*k
        end do
        do k = 0, 6
            scene_x(k + 1) = -3.0_c_double + k
        end do
        do k = 0, 16
            sensor(k + 1) = k
        end do
        status = spart_instrument_create(context, as_line, angle=[0.0_c_double, 90.0_c_double], &
                                         dispersion=0.01_c_double, plate_scale=1.0_c_double, &
                                         wavelength_ref=171.0_c_double, &
                                         position_ref=[8.0_c_double, 8.0_c_double], &
                                         area_effective=2.0_c_double, &
                                         exposure_time=10.0_c_double, scene_x=scene_x, &
                                         scene_y=scene_x, sensor_x=sensor, sensor_y=sensor, &
                                         quantum_yield=1.5_c_double, read_noise=2.0_c_double, &
                                         line_bins=[3_c_int64_t], line_wavelength=wavelength, &
                                         line_scale=[1.0_c_double], &
                                         memory_budget=int(2**26, c_size_t))
        call expect_status(context, status, SPART_OK, 'lines: one line as a line, streamed')
        call fill_scene(scene)
        status = spart_instrument_image(context, plain, scene, images, widths)
        call expect_status(context, status, SPART_OK, 'lines: image of the one-line instrument')
        status = spart_instrument_image(context, as_line, scene, line_images, widths)
        call expect_status(context, status, SPART_OK, 'lines: image of the line')
        call expect_same_bits(line_images, images, 512, 'lines: the same images, bit for bit')
        call spart_instrument_free(as_line)
        status = spart_instrument_create(context, as_line, angle=[0.0_c_double], &
                                         dispersion=0.01_c_double, plate_scale=1.0_c_double, &
                                         wavelength_ref=171.0_c_double, &
                                         position_ref=[8.0_c_double, 8.0_c_double], &
                                         area_effective=2.0_c_double, &
                                         exposure_time=10.0_c_double, scene_x=scene_x, &
                                         scene_y=scene_x, sensor_x=sensor, sensor_y=sensor, &
                                         line_bins=[3_c_int64_t, 2_c_int64_t], &
                                         line_wavelength=wavelength)
        call expect_status(context, status, SPART_ERROR_SHAPE_MISMATCH, &
                           'lines: 4 edges for lines of 3 and 2 bins refused')
        call spart_instrument_free(plain)
        call spart_context_free(context)
    end subroutine lines_give_the_one_line_bits

    ! The scene (y, x, wavelength) = 1e-9 value_at(y, x, wavelength).
    subroutine fill_scene(scene)
        real(c_double), intent(out) :: scene(6, 6, 3)
        integer :: i, j, k
        do k = 0, 2
            do j = 0, 5
                do i = 0, 5
                    scene(i + 1, j + 1, k + 1) = 1e-9_c_double*value_at(i, j, k)
                end do
            end do
        end do
    end subroutine fill_scene

    subroutine instrument_products_have_the_bits_of_c()
        type(spart_context) :: context
        type(spart_instrument) :: instrument
        type(spart_regridder) :: forward
        real(c_double) :: scene(6, 6, 3), images(16, 16, 2), widths(16, 16, 2)
        real(c_double) :: scenes(6, 6, 3, 2), observed(16, 16, 2), observed_widths(16, 16, 2)
        real(c_double) :: flat_images(512), gaussians(6, 4, 4), wavelength(5), short_scenes(210)
        real(c_double) :: c_images(512), c_widths(512), c_scenes(216), c_observed(512)
        real(c_double) :: c_observed_widths(512), c_gaussians(96), c_wavelength(5)
        real(c_double), pointer :: photons(:, :, :)
        character(kind=c_char) :: sentence(SENTENCE_LENGTH)
        integer(c_int) :: status
        integer :: k
        call expect_status(context, spart_context_create(context), SPART_OK, 'instrument: context')
        status = make_instrument(context, instrument)
        call expect_status(context, status, SPART_OK, 'instrument: created')
        call expect(spart_instrument_num_channel(instrument) == 2 .and. &
                    spart_instrument_scene_size(instrument) == 108 .and. &
                    spart_instrument_image_size(instrument) == 256, &
                    'instrument: 2 channels, scenes of 108, images of 256')
        forward = spart_instrument_forward(instrument)
        call expect(all(spart_regridder_shape_input(forward) == [6, 6, 3, 1]), &
                    'instrument: the forward operator takes scenes (y, x, wavelength, 1)')
        call expect(all(spart_regridder_shape_output(forward) == [16, 16, 1, 2]), &
                    'instrument: and gives images (y, x, 1, channel)')
        call expect(spart_instrument_num_channel(instrument) == 2, &
                    'instrument: freeing its operator handle leaves it alone')
        photons => spart_instrument_photons_per_radiance(instrument)
        call expect(all(shape(photons) == [6, 6, 3]), 'instrument: photons per radiance (6, 6, 3)')

        status = reference_instrument(c_images, c_widths, c_scenes, c_observed, &
                                      c_observed_widths, c_gaussians, c_wavelength, sentence, &
                                      int(SENTENCE_LENGTH, c_int64_t))
        call expect(status == SPART_OK, 'instrument: the C reference ran')
        if (status /= SPART_OK) write (*, '(a, a)') '        ', c_sentence(sentence)

        call fill_scene(scene)
        status = spart_instrument_image(context, instrument, scene, images, widths)
        call expect_status(context, status, SPART_OK, 'instrument: image')
        call expect_same_bits(images, c_images, 512, 'instrument: images as in C')
        call expect_same_bits(widths, c_widths, 512, 'instrument: widths as in C')
        status = spart_instrument_image(context, instrument, reshape(scene, [108]), flat_images)
        call expect_same_bits(flat_images, c_images, 512, 'instrument: flat arrays, the same')
        ! The forward operator takes the scene (6, 6, 3) as its input (6, 6,
        ! 3, 1): a non-negative scene gives the images themselves.
        status = spart_regridder_apply(context, forward, scene, observed)
        call expect_status(context, status, SPART_OK, 'instrument: forward operator on (6, 6, 3)')
        call expect_same_bits(observed, c_images, 512, 'instrument: forward product = images')
        call spart_regridder_free(forward)
        status = spart_instrument_backproject(context, instrument, images, scenes)
        call expect_status(context, status, SPART_OK, 'instrument: backproject')
        call expect_same_bits(scenes, c_scenes, 216, 'instrument: backprojection as in C')
        status = spart_instrument_observe(context, instrument, scene, 3_c_int64_t, observed, &
                                          observed_widths)
        call expect_status(context, status, SPART_OK, 'instrument: observe')
        call expect_same_bits(observed, c_observed, 512, 'instrument: observations of seed 3')
        call expect_same_bits(observed_widths, c_observed_widths, 512, &
                              'instrument: their widths as in C')

        status = spart_instrument_image(context, instrument, scene, flat_images(1:511))
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'instrument: 511 image values refused')
        call expect(spart_context_error(context) == 'images holds 511 values, but the '// &
                    'instrument needs 512', 'instrument: the sentence gives both sizes')
        status = spart_instrument_backproject(context, instrument, images, short_scenes)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'instrument: 210 scene values refused')

        status = spart_scene_gaussians(context, 171.0_c_double, &
                                       [(-100.0_c_double + 50.0_c_double*k, k=0, 4)], &
                                       [(-2.0_c_double + k, k=0, 4)], &
                                       [(-3.0_c_double + k, k=0, 6)], gaussians, wavelength)
        call expect_status(context, status, SPART_OK, 'scene: Gaussians')
        call expect_same_bits(gaussians, c_gaussians, 96, 'scene: (y, x, wavelength) as in C')
        call expect_same_bits(wavelength, c_wavelength, 5, 'scene: wavelength edges as in C')
        status = spart_scene_gaussians(context, 171.0_c_double, [0.0_c_double, 1.0_c_double], &
                                       [0.0_c_double, 1.0_c_double], &
                                       [0.0_c_double, 1.0_c_double], gaussians)
        call expect(status == SPART_ERROR_SHAPE_MISMATCH, 'scene: a scene of the wrong shape')
        call expect(index(spart_context_error(context), 'scene has shape (6, 4, 4)') > 0, &
                    'scene: the sentence gives its shape: '//spart_context_error(context))
        call spart_instrument_free(instrument)
        call spart_instrument_free(instrument)
        call spart_context_free(context)
    end subroutine instrument_products_have_the_bits_of_c

    subroutine instrument_run_has_the_bits_of_c()
        type(spart_context) :: context
        type(spart_instrument) :: instrument
        type(spart_mart_regridder_pair), target :: pair
        type(spart_mart_operators) :: operators
        type(spart_mart_result) :: result
        real(c_double) :: scene(6, 6, 3), observed(16, 16, 2)
        integer(c_int) :: status
        call expect_status(context, spart_context_create(context), SPART_OK, &
                           'instrument MART: context')
        status = make_instrument(context, instrument)
        call fill_scene(scene)
        status = spart_instrument_observe(context, instrument, scene, 3_c_int64_t, observed)
        call expect_status(context, status, SPART_OK, 'instrument MART: observed')
        status = spart_instrument_mart_operators(context, instrument, pair, operators)
        call expect_status(context, status, SPART_OK, 'instrument MART: operators')
        status = spart_mart_solve(context, operators, observed, result, &
                                  max_iterations=10_c_int64_t)
        call expect_status(context, status, SPART_OK, 'instrument MART: solve')
        call expect_same_run(result, 2, 'instrument MART')
        call spart_mart_result_free(result)
        call spart_instrument_free(instrument)
        call spart_context_free(context)
    end subroutine instrument_run_has_the_bits_of_c
end program test_fortran_mart
