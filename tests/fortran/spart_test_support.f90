! tests/fortran/spart_test_support.f90: what the Fortran tests share: the
! C reference functions (c_reference.c), the inputs they make, and checks
! that count failures and say which check failed.
module spart_test_support
    use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int64_t, c_null_char, c_ptr
    use spart
    implicit none
    private

    public :: expect, expect_status, expect_same_bits, finish, c_sentence, value_at
    public :: reference_case, reference_error, reference_mart, reference_instrument, failures

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

    ! End the test: exit status 1 when a check failed.
    subroutine finish()
        if (failures > 0) then
            write (*, '(i0, a)') failures, ' check(s) failed'
            error stop 1
        end if
        write (*, '(a)') 'all checks passed'
    end subroutine finish
end module spart_test_support
