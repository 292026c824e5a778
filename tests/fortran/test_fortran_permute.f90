! tests/fortran/test_fortran_permute.f90: the block permute (spart/permute.h)
! from Fortran: a block described by c_loc of Fortran arrays, a plan made
! and executed on host arrays. The C array a[2][3] is the Fortran a(3, 2),
! so permuting the C axes (1, 0) gives transpose(a); a recoupled block with
! n = 2 destinations of one source gives U(i) * transpose(a) in each; the
! same source and destination are refused.
program test_fortran_permute
    use, intrinsic :: iso_c_binding
    use spart
    implicit none
    type(spart_context) :: context
    type(spart_permute_plan) :: plan
    type(spart_permute_block) :: blocks(2)
    integer(c_int64_t), target :: sizes(2) = [2_c_int64_t, 3_c_int64_t]
    integer(c_int64_t), target :: zero_offset(1) = [0_c_int64_t]
    integer(c_int64_t), target :: source_strides(2) = [3_c_int64_t, 1_c_int64_t]
    integer(c_int64_t), target :: destination_strides(2, 2) = reshape([2_c_int64_t, 1_c_int64_t, &
                                                                      2_c_int64_t, 1_c_int64_t], [2, 2])
    integer(c_int64_t), target :: recoupled_offsets(2) = [6_c_int64_t, 12_c_int64_t]
    integer(c_int64_t), target :: second_source(1) = [6_c_int64_t]
    real(c_double), target :: recoupling(2) = [2.0d0, -0.5d0] ! U(1, j=1) and U(2, j=1)
    integer(c_int), target :: permutation(2) = [1_c_int, 0_c_int]
    real(c_double), target :: a(3, 2, 2), b(2, 3, 3), alpha, beta
    integer :: status

    a(:, :, 1) = reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [3, 2])
    a(:, :, 2) = -a(:, :, 1) / 4
    b = 0
    alpha = 1
    beta = 0
    status = spart_context_create(context)
    if (status /= SPART_OK) stop 1
    ! Block 1: source a(:, :, 1) to b(:, :, 1), plain.
    blocks(1)%sizes = c_loc(sizes)
    blocks(1)%num_destination = 1
    blocks(1)%num_source = 1
    blocks(1)%recoupling = c_null_ptr
    blocks(1)%destination_offsets = c_loc(zero_offset)
    blocks(1)%destination_strides = c_loc(destination_strides)
    blocks(1)%source_offsets = c_loc(zero_offset)
    blocks(1)%source_strides = c_loc(source_strides)
    ! Block 2: source a(:, :, 2) to b(:, :, 2) and b(:, :, 3), times U.
    blocks(2) = blocks(1)
    blocks(2)%num_destination = 2
    blocks(2)%recoupling = c_loc(recoupling)
    blocks(2)%destination_offsets = c_loc(recoupled_offsets)
    blocks(2)%source_offsets = c_loc(second_source)
    blocks(2)%source_strides = c_loc(source_strides)
    status = spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, permutation, &
                                       SPART_PERMUTE_IDENTITY, blocks, 12_c_int64_t, 18_c_int64_t, &
                                       0_c_int, plan)
    if (status /= SPART_OK) then
        print *, spart_context_error(context)
        stop 2
    end if
    status = spart_permute_execute(context, plan, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b))
    if (status /= SPART_OK) stop 3
    if (maxval(abs(b(:, :, 1) - transpose(a(:, :, 1)))) > 0) stop 4
    if (maxval(abs(b(:, :, 2) - 2 * transpose(a(:, :, 2)))) > 0) stop 5
    if (maxval(abs(b(:, :, 3) + 0.5d0 * transpose(a(:, :, 2)))) > 0) stop 6
    ! Aliasing is refused with a sentence.
    status = spart_permute_execute(context, plan, c_loc(alpha), c_loc(b), c_loc(beta), c_loc(b))
    if (status /= SPART_ERROR_INVALID_ARGUMENT) stop 7
    if (index(spart_context_error(context), 'overlap') == 0) stop 8
    call spart_permute_plan_free(plan)
    if (c_associated(plan%handle)) stop 9
    call spart_context_free(context)
    print '(a)', 'test_fortran_permute: transpose, recoupling and aliasing as in C'
end program test_fortran_permute
