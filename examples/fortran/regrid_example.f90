! examples/fortran/regrid_example.f90: spart from Fortran, the C quick
! start's example (examples/regrid_example.c) through the module spart.
!
! It builds conservative weights from a square grid to the same grid
! rotated by 0.2 rad, moves a Gaussian blob across with them, checks that
! the total is conserved, and goes back with the conservative transpose.
! Then it assembles the weights into a Regridder (one sparse operator),
! applies it to the blob and to a batch of three, and compares.
!
! Arrays are Fortran's, in Fortran order: the grid's vertices x(i, j), the
! cells' values v(i, j), i along x. spart sees the same memory as C arrays
! with the axes reversed ([j][i]) and never copies or transposes them.
!
! Every call returns a status; a failure prints spart's sentence and stops.
! Build it against an installed spart (README, section Fortran):
!   gfortran regrid_example.f90 $(pkg-config --cflags --libs spart-fortran)
program regrid_example
    use, intrinsic :: iso_c_binding, only: c_double, c_int, c_int64_t
    use spart
    implicit none

    integer, parameter :: n = 65 ! vertices per axis
    real(c_double), parameter :: angle = 0.2_c_double
    type(spart_context) :: context
    type(spart_weights) :: weights, backward
    type(spart_regridder) :: regridder
    type(spart_array), allocatable :: square(:), rotated(:)
    real(c_double) :: x(n, n), y(n, n), x_rotated(n, n), y_rotated(n, n)
    real(c_double) :: blob(n - 1, n - 1), moved(n - 1, n - 1), back(n - 1, n - 1)
    real(c_double) :: batch(n - 1, n - 1, 3), moved_batch(n - 1, n - 1, 3)
    real(c_double) :: cx, cy
    integer :: i, j, b

    ! The grids: vertices on [-4, 4]^2, and the same rotated by `angle`.
    do j = 1, n
        do i = 1, n
            x(i, j) = -4 + 8*real(i - 1, c_double)/(n - 1)
            y(i, j) = -4 + 8*real(j - 1, c_double)/(n - 1)
            x_rotated(i, j) = cos(angle)*x(i, j) - sin(angle)*y(i, j)
            y_rotated(i, j) = sin(angle)*x(i, j) + cos(angle)*y(i, j)
        end do
    end do
    ! A Gaussian blob on the cells of the square grid, off centre.
    do j = 1, n - 1
        do i = 1, n - 1
            cx = (x(i, j) + x(i + 1, j))/2
            cy = (y(i, j) + y(i, j + 1))/2
            blob(i, j) = exp(-((cx - 0.5_c_double)**2 + cy**2)/0.5_c_double)
        end do
    end do

    call check(spart_context_create(context), 'spart_context_create')
    square = [spart_array_of(x), spart_array_of(y)]
    rotated = [spart_array_of(x_rotated), spart_array_of(y_rotated)]

    ! Weights that move cell values from the square grid to the rotated one.
    call check(spart_weights_build(context, square, rotated, weights, &
                                   method=SPART_METHOD_CONSERVATIVE), 'spart_weights_build')
    write (*, '(a, i0, a, i0, a)') 'weights: ', spart_weights_num_entries(weights), &
        ' entries from ', size(blob), ' cells'

    ! Apply them once as a Regridder, and check the total is conserved.
    call check(spart_regridder_create(context, weights, regridder), 'spart_regridder_create')
    call check(spart_regridder_apply(context, regridder, blob, moved), 'spart_regridder_apply')
    write (*, '(a, es12.5, a, es12.5)') 'total before ', sum(blob), ', after ', sum(moved)
    if (abs(sum(moved) - sum(blob)) > 1e-9_c_double*sum(blob)) then
        write (*, '(a)') 'regrid_example: the total is not conserved'
        error stop 1
    end if

    ! Back with the conservative transpose (weights built the other way,
    ! scaled by the cell areas), which brings the blob close to where it was.
    call check(spart_weights_transpose_conservative(context, weights, square, rotated, &
                                                    backward), &
               'spart_weights_transpose_conservative')
    call spart_regridder_free(regridder)
    call check(spart_regridder_create(context, backward, regridder), 'spart_regridder_create')
    call check(spart_regridder_apply(context, regridder, moved, back), 'spart_regridder_apply')
    write (*, '(a, es10.3)') 'largest change after the round trip: ', maxval(abs(back - blob))

    ! A batch: the last dimension holds separate vectors (C's leading axis).
    call spart_regridder_free(regridder)
    call check(spart_regridder_create(context, weights, regridder), 'spart_regridder_create')
    do b = 1, 3
        batch(:, :, b) = b*blob
    end do
    call check(spart_regridder_apply(context, regridder, batch, moved_batch), &
               'spart_regridder_apply (batch)')
    if (maxval(abs(moved_batch(:, :, 1) - moved)) > 0) then
        write (*, '(a)') 'regrid_example: a vector in a batch gives other numbers than alone'
        error stop 1
    end if
    write (*, '(a)') 'batch of 3: the first vector gives the same bits as alone'

    call spart_regridder_free(regridder)
    call spart_weights_free(backward)
    call spart_weights_free(weights)
    call spart_context_free(context)

contains

    ! Stop with spart's sentence when a call failed.
    subroutine check(status, what)
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: what
        if (status /= SPART_OK) then
            write (*, '(a, a, a, a, a, a)') 'regrid_example: ', what, ' failed: ', &
                spart_status_string(status), ': ', spart_context_error(context)
            error stop 1
        end if
    end subroutine check
end program regrid_example
