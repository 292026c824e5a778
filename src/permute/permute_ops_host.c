/*
 * src/permute/permute_ops_host.c: the host's table of permute operations
 * (src/permute/permute_internal.h): the plan's tables stay where they are
 * and the OpenMP twin (host/permute.c) runs over them.
 */
#include "permute/permute_internal.h"

static spart_status host_place(spart_context *context, spart_permute_plan *plan)
{
    (void)context, (void)plan;
    return SPART_OK;
}

static void host_release(spart_permute_plan *plan)
{
    (void)plan;
}

static spart_status host_execute(spart_context *context, const spart_permute_plan *plan,
                                 const spart_permute_scalars *scalars, const void *source,
                                 void *destination)
{
    spart_permute_host(&plan->work, scalars, source, destination, spart_threads(context));
    return SPART_OK;
}

const spart_permute_ops spart_permute_host_ops = {
    .where = "host",
    .place = host_place,
    .release = host_release,
    .execute = host_execute,
};
