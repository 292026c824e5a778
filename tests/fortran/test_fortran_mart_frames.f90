! tests/fortran/test_fortran_mart_frames.f90: MART on many frames at once
! from Fortran (spart_mart_solve_frames) gives every frame the bits of
! spart_mart_solve on that frame alone (as the C contract says), in one
! batch or several, with a guess per frame; a progress callback stops one
! frame only; sizes the C driver cannot see are checked, with sentences,
! and a failed call leaves every result null.

! A progress callback written in Fortran that counts its calls a frame
! (through `user`) and stops frame 1 (from 0) after its third iteration,
! letting the others go on.
module mart_frames_callbacks
    use, intrinsic :: iso_c_binding, only: c_f_pointer, c_int, c_ptr
    use spart
    implicit none
    private
    public :: calls_per_frame, stop_frame_one_after_three

    type, bind(C) :: calls_per_frame
        integer(c_int) :: calls(4)
    end type calls_per_frame

contains

    function stop_frame_one_after_three(user, progress) bind(C) result(stop)
        type(c_ptr), value :: user
        type(spart_mart_progress), intent(in) :: progress
        integer(c_int) :: stop
        type(calls_per_frame), pointer :: counts
        call c_f_pointer(user, counts)
        counts%calls(progress%frame + 1) = counts%calls(progress%frame + 1) + 1
        stop = 0
        if (progress%frame == 1 .and. progress%iteration == 2) stop = 1 ! iterations from 0
    end function stop_frame_one_after_three
end module mart_frames_callbacks

program test_fortran_mart_frames
    use, intrinsic :: iso_c_binding, only: c_associated, c_double, c_int, c_int64_t, c_loc
    use spart
    use spart_test_support
    use mart_frames_callbacks
    implicit none

    integer, parameter :: FRAMES = 4

    ! What every test starts from (make_frames).
    type :: frames_case
        type(spart_context) :: context
        type(spart_weights) :: weights, transposed
        type(spart_regridder) :: forward, backward
        type(spart_mart_regridder_pair) :: pair
        type(spart_mart_operators) :: operators
        real(c_double) :: observed(8, 3, FRAMES)
    end type frames_case

    call frames_have_the_bits_of_each_frame_alone()
    call a_callback_stops_one_frame()
    call sizes_the_driver_cannot_see_are_checked()
    call finish()

contains

    ! The pair of test_fortran_mart (3 channels, scenes of 12, images of 8),
    ! its MART operators and FRAMES observations of it: the pair's images,
    ! each pixel scaled by 1 + ((i j + 3 f) mod 7) / 8, so the frames stop
    ! after different numbers of iterations. Declared TARGET (the operators keep the pair's address).
    subroutine make_frames(c, what)
        type(frames_case), intent(out), target :: c
        character(len=*), intent(in) :: what
        real(c_double) :: one(8, 3)
        integer :: f, i, j
        call expect_status(c%context, spart_context_create(c%context), SPART_OK, what//': context')
        call make_pair(c%context, c%weights, c%transposed, c%forward, c%backward)
        call observe_pair(c%context, c%forward, one)
        do f = 1, FRAMES
            do j = 1, 3
                do i = 1, 8
                    c%observed(i, j, f) = one(i, j)*(1.0_c_double + real(mod(i*j + 3*f, 7), &
                                                                         c_double)/8.0_c_double)
                end do
            end do
        end do
        c%pair = spart_mart_regridder_pair(c%forward%handle, c%backward%handle, 3_c_int64_t, &
                                           1.5_c_double, 0.5_c_double)
        call expect_status(c%context, spart_mart_operators_from_regridders(c%context, c%pair, &
                                                                           c%operators), &
                           SPART_OK, what//': MART operators')
    end subroutine make_frames

    subroutine free_frames(c)
        type(frames_case), intent(inout) :: c
        call spart_regridder_free(c%backward)
        call spart_regridder_free(c%forward)
        call spart_weights_free(c%transposed)
        call spart_weights_free(c%weights)
        call spart_context_free(c%context)
    end subroutine free_frames

    ! Frame f of `results` is, bit for bit, `alone` (solution, merits and
    ! kept states; iterations, success and message).
    subroutine expect_frame(results, f, alone, what)
        type(spart_mart_result), intent(in) :: results(:)
        integer, intent(in) :: f
        type(spart_mart_result), intent(in) :: alone
        character(len=*), intent(in) :: what
        real(c_double), allocatable :: mine(:), theirs(:)
        character(len=8) :: frame
        write (frame, '(i0)') f
        call expect(c_associated(results(f)%handle), what//': frame '//trim(frame)//' has a result')
        if (.not. c_associated(results(f)%handle)) return
        allocate (mine, source=packed_result(results(f)))
        allocate (theirs, source=packed_result(alone))
        call expect(size(mine) == size(theirs), what//': frame '//trim(frame)// &
                    ' has as many iterations and states as alone')
        if (size(mine) == size(theirs)) then
            call expect_same_bits(mine, theirs, size(mine), what//': frame '//trim(frame)// &
                                  ', the bits of spart_mart_solve on it alone')
        end if
        call expect(spart_mart_result_message(results(f)) == spart_mart_result_message(alone), &
                    what//': frame '//trim(frame)//', the message of the frame alone')
    end subroutine expect_frame

    subroutine frames_have_the_bits_of_each_frame_alone()
        type(frames_case), target :: c
        type(spart_mart_result) :: results(FRAMES), batched(FRAMES), guessed(FRAMES), alone
        real(c_double) :: guess(12, FRAMES)
        integer(c_int64_t) :: iterations(FRAMES)
        integer(c_int) :: status
        integer :: f, k
        call make_frames(c, 'frames')
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, results, &
                                         max_iterations=40_c_int64_t, keep_intermediate=.true.)
        call expect_status(c%context, status, SPART_OK, 'frames: one batch')
        ! The same frames in batches of 3 (3 + 1), observed flat.
        status = spart_mart_solve_frames(c%context, c%operators, &
                                         reshape(c%observed, [size(c%observed)]), batched, &
                                         batch_frames=3_c_int64_t, max_iterations=40_c_int64_t, &
                                         keep_intermediate=.true.)
        call expect_status(c%context, status, SPART_OK, 'frames: batches of 3')
        do k = 1, 12
            do f = 1, FRAMES
                guess(k, f) = 0.5_c_double + value_at(k - 1, f - 1, 0)/64.0_c_double
            end do
        end do
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, guessed, &
                                         guess=reshape(guess, [size(guess)]))
        call expect_status(c%context, status, SPART_OK, 'frames: a guess a frame')
        do f = 1, FRAMES
            status = spart_mart_solve(c%context, c%operators, c%observed(:, :, f), alone, &
                                      max_iterations=40_c_int64_t, keep_intermediate=.true.)
            call expect_status(c%context, status, SPART_OK, 'frames: a frame alone')
            iterations(f) = spart_mart_result_num_iterations(alone)
            call expect_frame(results, f, alone, 'frames, one batch')
            call expect_frame(batched, f, alone, 'frames, batches of 3')
            call spart_mart_result_free(alone)
            status = spart_mart_solve(c%context, c%operators, c%observed(:, :, f), alone, &
                                      guess=guess(:, f))
            call expect_status(c%context, status, SPART_OK, 'frames: a frame alone from its guess')
            call expect_frame(guessed, f, alone, 'frames, a guess a frame')
            call spart_mart_result_free(alone)
        end do
        call expect(any(iterations /= iterations(1)), &
                    'frames: the frames stop after different numbers of iterations')
        do f = 1, FRAMES
            call spart_mart_result_free(results(f))
            call spart_mart_result_free(batched(f))
            call spart_mart_result_free(guessed(f))
        end do
        call free_frames(c)
    end subroutine frames_have_the_bits_of_each_frame_alone

    ! A nonzero return of the callback stops that frame only: frame 1 (from
    ! 0) after 3 iterations, the others as without the callback.
    subroutine a_callback_stops_one_frame()
        type(frames_case), target :: c
        type(spart_mart_result) :: stopped(FRAMES), free_running(FRAMES)
        type(calls_per_frame), target :: counts
        integer(c_int) :: status
        integer :: f
        call make_frames(c, 'callback')
        counts%calls = 0
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, stopped, &
                                         callback=stop_frame_one_after_three, &
                                         callback_user=c_loc(counts))
        call expect_status(c%context, status, SPART_OK, 'callback: frames')
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, free_running)
        call expect_status(c%context, status, SPART_OK, 'callback: frames without it')
        call expect(spart_mart_result_num_iterations(stopped(2)) == 3 .and. counts%calls(2) == 3, &
                    'callback: frame 1 (from 0) told 3 times, stopped after 3 iterations')
        call expect(all(int(counts%calls, c_int64_t) == &
                        [(spart_mart_result_num_iterations(stopped(f)), f=1, FRAMES)]), &
                    'callback: told once an iteration of each frame, with its frame')
        do f = 1, FRAMES
            if (f /= 2) call expect_frame(stopped, f, free_running(f), 'callback, other frames')
        end do
        do f = 1, FRAMES
            call spart_mart_result_free(stopped(f))
            call spart_mart_result_free(free_running(f))
        end do
        call free_frames(c)
    end subroutine a_callback_stops_one_frame

    subroutine sizes_the_driver_cannot_see_are_checked()
        type(frames_case), target :: c
        type(spart_mart_result) :: results(FRAMES), three(3)
        real(c_double) :: guess(12, FRAMES - 1)
        integer(c_int) :: status
        integer :: f
        call make_frames(c, 'sizes')
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, three)
        call expect_status(c%context, status, SPART_ERROR_SHAPE_MISMATCH, &
                           'sizes: 4 frames of observed images, 3 results')
        call expect(index(spart_context_error(c%context), 'observed holds 96 values, but 3 '// &
                          'frames (the size of results) of 3 channels x 8 values per image '// &
                          '= 72') > 0, 'sizes: the sentence names both: '// &
                    spart_context_error(c%context))
        call expect(.not. any([(c_associated(three(f)%handle), f=1, 3)]), &
                    'sizes: no result on failure')
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, results, &
                                         guess=reshape(guess, [size(guess)]))
        call expect_status(c%context, status, SPART_ERROR_SHAPE_MISMATCH, &
                           'sizes: a guess for 3 frames of 4')
        call expect(index(spart_context_error(c%context), 'guess holds 36 values, but 4 frames '// &
                          'of scenes of 12 values = 48') > 0, 'sizes: the guess sentence: '// &
                    spart_context_error(c%context))
        status = spart_mart_solve_frames(c%context, c%operators, c%observed, results, &
                                         batch_frames=-1_c_int64_t)
        call expect_status(c%context, status, SPART_ERROR_INVALID_ARGUMENT, &
                           'sizes: a negative batch, refused by C')
        call expect(.not. any([(c_associated(results(f)%handle), f=1, FRAMES)]), &
                    'sizes: every result null after a failed call')
        call free_frames(c)
    end subroutine sizes_the_driver_cannot_see_are_checked
end program test_fortran_mart_frames
