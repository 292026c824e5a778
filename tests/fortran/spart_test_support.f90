! tests/fortran/spart_test_support.f90: what the Fortran tests share: the
! C reference functions (c_reference.c), the inputs they make, and checks
! that count failures and say which check failed.
module spart_test_support
    use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int64_t, c_null_char, c_ptr
    use spart
    implicit none
    private

    public :: expect, expect_status, expect_same_bits, finish, c_sentence, value_at
    public :: build_weights, make_pair, observe_pair, packed_result
    public :: reference_case, reference_error, reference_mart, reference_instrument, failures
    public :: reference_psf_operator, reference_psf_instrument

    ! Cases of reference_case (the same numbers as in c_reference.c).
    integer(c_int), parameter, public :: CASE_MULTILINEAR_2D = 1
    integer(c_int), parameter, public :: CASE_CONSERVATIVE_1D = 2
    integer(c_int), parameter, public :: CASE_CONSERVATIVE_2D = 3
    integer(c_int), parameter, public :: CASE_CONSERVATIVE_2D_SWEEP = 4
    integer(c_int), parameter, public :: CASE_SHARED_INPUT_FLOAT32 = 5

    integer, parameter, public :: SENTENCE_LENGTH = 600

    integer :: failures = 0

    interface
        function reference_case(which, weights, y, size_y, y_batch, size_y_batch, x_back, &
                                size_x_back, x_conservative, size_x_conservative, sentence, &
                                capacity) bind(C, name="reference_case") result(status)
            import :: c_char, c_double, c_int, c_int64_t, c_ptr
            integer(c_int), value :: which
            type(c_ptr), intent(inout) :: weights
            real(c_double), intent(inout) :: y(*), y_batch(*), x_back(*), x_conservative(*)
            integer(c_int64_t), value :: size_y, size_y_batch, size_x_back, size_x_conservative
            character(kind=c_char), intent(inout) :: sentence(*)
            integer(c_int64_t), value :: capacity
            integer(c_int) :: status
        end function reference_case

        function reference_error(which, sentence, capacity) bind(C, name="reference_error") &
            result(status)
            import :: c_char, c_int, c_int64_t
            integer(c_int), value :: which
            character(kind=c_char), intent(inout) :: sentence(*)
            integer(c_int64_t), value :: capacity
            integer(c_int) :: status
        end function reference_error

        function reference_mart(which, packed, capacity, count, message, message_capacity, &
                                sentence, sentence_capacity) bind(C, name="reference_mart") &
            result(status)
            import :: c_char, c_double, c_int, c_int64_t
            integer(c_int), value :: which
            real(c_double), intent(inout) :: packed(*)
            integer(c_int64_t), value :: capacity
            integer(c_int64_t), intent(out) :: count
            character(kind=c_char), intent(inout) :: message(*)
            integer(c_int64_t), value :: message_capacity
            character(kind=c_char), intent(inout) :: sentence(*)
            integer(c_int64_t), value :: sentence_capacity
            integer(c_int) :: status
        end function reference_mart

        function reference_instrument(images, widths, scenes, observed, observed_widths, &
                                      gaussians, wavelength, sentence, sentence_capacity) &
            bind(C, name="reference_instrument") result(status)
            import :: c_char, c_double, c_int, c_int64_t
            real(c_double), intent(inout) :: images(*), widths(*), scenes(*), observed(*)
            real(c_double), intent(inout) :: observed_widths(*), gaussians(*), wavelength(*)
            character(kind=c_char), intent(inout) :: sentence(*)
            integer(c_int64_t), value :: sentence_capacity
            integer(c_int) :: status
        end function reference_instrument

        function reference_psf_operator(applied, adjoint, offsets, indices_input, &
                                        indices_output, values, capacity, entries, gaussian, &
                                        sentence, sentence_capacity) &
            bind(C, name="reference_psf_operator") result(status)
            import :: c_char, c_double, c_int, c_int64_t
            real(c_double), intent(inout) :: applied(*), adjoint(*), values(*), gaussian(*)
            integer(c_int64_t), intent(inout) :: offsets(*), indices_input(*), indices_output(*)
            integer(c_int64_t), value :: capacity
            integer(c_int64_t), intent(out) :: entries
            character(kind=c_char), intent(inout) :: sentence(*)
            integer(c_int64_t), value :: sentence_capacity
            integer(c_int) :: status
        end function reference_psf_operator

        function reference_psf_instrument(folded, images, scenes, solution, chi2, sentence, &
                                          sentence_capacity) &
            bind(C, name="reference_psf_instrument") result(status)
            import :: c_char, c_double, c_int, c_int64_t
            integer(c_int), value :: folded
            real(c_double), intent(inout) :: images(*), scenes(*), solution(*), chi2(*)
            character(kind=c_char), intent(inout) :: sentence(*)
            integer(c_int64_t), value :: sentence_capacity
            integer(c_int) :: status
        end function reference_psf_instrument
    end interface

contains

    ! The value c_reference.c's value_at gives position (i, j, k) (0-based;
    ! i along the fastest axis), exact in binary.
    function value_at(i, j, k) result(value)
        integer, intent(in) :: i, j, k
        real(c_double) :: value
        value = 1.0_c_double + real(i, c_double) + 16.0_c_double*real(j, c_double) + &
                0.25_c_double*real(k, c_double)
    end function value_at

    subroutine expect(condition, what)
        logical, intent(in) :: condition
        character(len=*), intent(in) :: what
        if (condition) then
            write (*, '(a, a)') 'ok      ', what
        else
            write (*, '(a, a)') 'FAILED  ', what
            failures = failures + 1
        end if
    end subroutine expect

    ! A status check that shows spart's sentence when it fails.
    subroutine expect_status(context, status, expected, what)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: status, expected
        character(len=*), intent(in) :: what
        call expect(status == expected, what)
        if (status /= expected) then
            write (*, '(a, a, a, a)') '        got ', spart_status_string(status), ': ', &
                spart_context_error(context)
        end if
    end subroutine expect_status

    ! A result in one array, as c_reference.c's pack_result.
    function packed_result(result) result(packed)
        type(spart_mart_result), intent(in) :: result
        real(c_double), allocatable :: packed(:)
        real(c_double), pointer :: chi2(:, :), correlation(:, :)
        integer(c_int64_t) :: k, states
        states = spart_mart_result_num_solutions(result)
        chi2 => spart_mart_result_mean_chi_squared(result)
        correlation => spart_mart_result_correlation(result)
        packed = [real(spart_mart_result_num_iterations(result), c_double), &
                  merge(1.0_c_double, 0.0_c_double, spart_mart_result_success(result)), &
                  spart_mart_result_gamma(result), real(states, c_double), &
                  spart_mart_result_solution(result), reshape(chi2, [size(chi2)]), &
                  reshape(correlation, [size(correlation)])]
        do k = 0, states - 1
            packed = [packed, spart_mart_result_solutions(result, k)]
        end do
    end function packed_result

    ! Whether n doubles are the same bits (any rank: explicit-shape dummies
    ! take arrays in memory order).
    subroutine expect_same_bits(a, b, n, what)
        integer, intent(in) :: n
        real(c_double), intent(in) :: a(n), b(n)
        character(len=*), intent(in) :: what
        integer :: k, differing
        differing = 0
        do k = 1, n
            if (transfer(a(k), 0_c_int64_t) /= transfer(b(k), 0_c_int64_t)) then
                if (differing == 0) then
                    write (*, '(a, i0, a, es24.17, a, es24.17)') '        first difference at ', &
                        k, ': ', a(k), ' /= ', b(k)
                end if
                differing = differing + 1
            end if
        end do
        call expect(differing == 0, what)
    end subroutine expect_same_bits

    ! A NUL-terminated C string in a buffer, as a Fortran string.
    function c_sentence(buffer) result(sentence)
        character(kind=c_char), intent(in) :: buffer(:)
        character(len=:), allocatable :: sentence
        integer :: k
        sentence = ''
        do k = 1, size(buffer)
            if (buffer(k) == c_null_char) exit
            sentence = sentence//buffer(k)
        end do
    end function c_sentence

    ! The grids of a case in Fortran order (c_reference.c makes the same in
    ! C order), and its weights built with the options of the case.
    function build_weights(context, which, weights, grid_input, grid_output) result(status)
        type(spart_context), intent(in) :: context
        integer(c_int), intent(in) :: which
        type(spart_weights), intent(out) :: weights
        type(spart_array), allocatable, intent(out) :: grid_input(:), grid_output(:)
        integer(c_int) :: status
        real(c_double), allocatable :: x_in(:, :), y_in(:, :), x_out(:, :), y_out(:, :)
        real(c_double) :: line_in(9, 3), line_out(6), factor(8)
        integer :: i, j
        select case (which)
        case (CASE_MULTILINEAR_2D)
            allocate (x_in(7, 5), y_in(7, 5), x_out(6, 4), y_out(6, 4))
            do j = 0, 4
                do i = 0, 6
                    x_in(i + 1, j + 1) = i + 0.125_c_double*j
                    y_in(i + 1, j + 1) = j - 0.0625_c_double*i
                end do
            end do
            do j = 0, 3
                do i = 0, 5
                    x_out(i + 1, j + 1) = 0.5_c_double + 0.75_c_double*i
                    y_out(i + 1, j + 1) = 0.25_c_double + 0.5_c_double*j
                end do
            end do
            grid_input = [spart_array_of(x_in), spart_array_of(y_in)]
            grid_output = [spart_array_of(x_out), spart_array_of(y_out)]
            status = spart_weights_build(context, grid_input, grid_output, weights)
        case (CASE_CONSERVATIVE_1D, CASE_SHARED_INPUT_FLOAT32)
            do j = 0, 2
                do i = 0, 8
                    line_in(i + 1, j + 1) = i + 0.25_c_double*j + i*i/32.0_c_double
                end do
            end do
            do i = 0, 5
                line_out(i + 1) = -0.5_c_double + 1.5_c_double*i
            end do
            do i = 0, 7
                factor(i + 1) = 1.0_c_double + 0.5_c_double*i
            end do
            grid_input = [spart_array_of(line_in)]
            grid_output = [spart_array_of(line_out)]
            status = spart_weights_build(context, grid_input, grid_output, weights, &
                                         method=SPART_METHOD_CONSERVATIVE, axis_input=[-1], &
                                         axis_output=[-1], weights_input=spart_array_of(factor))
        case default
            allocate (x_in(8, 6), y_in(8, 6), x_out(7, 5), y_out(7, 5))
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
            grid_input = [spart_array_of(x_in), spart_array_of(y_in)]
            grid_output = [spart_array_of(x_out), spart_array_of(y_out)]
            if (which == CASE_CONSERVATIVE_2D) then
                status = spart_weights_build(context, grid_input, grid_output, weights, &
                                             method=SPART_METHOD_CONSERVATIVE, &
                                             algorithm=SPART_ALGORITHM_CLIP)
            else
                status = spart_weights_build(context, grid_input, grid_output, weights, &
                                             method=SPART_METHOD_CONSERVATIVE, &
                                             algorithm=SPART_ALGORITHM_SWEEP, &
                                             perturb=SPART_PERTURB_YES, seed=7_c_int64_t)
            end if
        end select
    end function build_weights

    ! The regridder pair of c_reference.c's make_pair_problem, in Fortran
    ! order: the scene (12, 1), images (8, 3), backprojections (12, 3).
    subroutine make_pair(context, weights, transposed, forward, backward)
        type(spart_context), intent(in) :: context
        type(spart_weights), intent(out) :: weights, transposed
        type(spart_regridder), intent(out) :: forward, backward
        type(spart_array) :: grid_input(1), grid_output(1)
        real(c_double) :: x_input(13), x_output(9, 3)
        integer :: k, c
        integer(c_int) :: status
        do k = 0, 12
            x_input(k + 1) = k + k*k/64.0_c_double
        end do
        do c = 0, 2
            do k = 0, 8
                x_output(k + 1, c + 1) = -0.25_c_double + 0.5_c_double*c + 1.5_c_double*k
            end do
        end do
        grid_input(1) = spart_array_of(x_input)
        grid_output(1) = spart_array_of(x_output)
        status = spart_weights_build(context, grid_input, grid_output, weights, &
                                     method=SPART_METHOD_CONSERVATIVE, axis_input=[-1], &
                                     axis_output=[-1])
        call expect_status(context, status, SPART_OK, 'pair: weights')
        status = spart_weights_transpose_conservative(context, weights, grid_input, grid_output, &
                                                      transposed, axis_input=[-1], &
                                                      axis_output=[-1])
        call expect_status(context, status, SPART_OK, 'pair: conservative transpose')
        status = spart_regridder_create(context, weights, forward, &
                                        shape_input=[12_c_int64_t, 1_c_int64_t], &
                                        shape_output=[8_c_int64_t, 3_c_int64_t])
        call expect_status(context, status, SPART_OK, 'pair: forward regridder')
        status = spart_regridder_create(context, transposed, backward, &
                                        shape_input=[8_c_int64_t, 3_c_int64_t], &
                                        shape_output=[12_c_int64_t, 3_c_int64_t])
        call expect_status(context, status, SPART_OK, 'pair: backward regridder')
    end subroutine make_pair

    ! The observed images of the pair problem: the forward of 1 + x/8.
    subroutine observe_pair(context, forward, observed)
        type(spart_context), intent(in) :: context
        type(spart_regridder), intent(in) :: forward
        real(c_double), intent(out) :: observed(8, 3)
        real(c_double) :: scene(12, 1)
        integer :: k
        do k = 0, 11
            scene(k + 1, 1) = 1.0_c_double + value_at(k, 0, 0)/8.0_c_double
        end do
        call expect_status(context, spart_regridder_apply(context, forward, scene, observed), &
                           SPART_OK, 'pair: observed images')
    end subroutine observe_pair

    ! End the test: exit status 1 when a check failed.
    subroutine finish()
        if (failures > 0) then
            write (*, '(i0, a)') failures, ' check(s) failed'
            error stop 1
        end if
        write (*, '(a)') 'all checks passed'
    end subroutine finish
end module spart_test_support
