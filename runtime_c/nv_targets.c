/* The per-target facts table (nv_classes.h).  Class IDs: facts section 1 table;
 * OGKM g_gpu_class_list.c. */
#include "nv_classes.h"
#include "nv_rm.h"

#include <string.h>

const bob_target_facts BOB_TARGET_SM86 = {
    .name = "sm_86", .sm = 0x86,
    .gpfifo_class = AMPERE_CHANNEL_GPFIFO_A, .compute_class = AMPERE_COMPUTE_B,
    .copy_class = AMPERE_DMA_COPY_B, .usermode_class = TURING_USERMODE_A,
    .gpfifo_class_name = "AMPERE_CHANNEL_GPFIFO_A", .compute_class_name = "AMPERE_COMPUTE_B",
    .usermode_class_name = "TURING_USERMODE_A",
    .usermode_takes_params = 0,
    .driver_branch = BOB_NV_DRIVER_BRANCH,
};

const bob_target_facts BOB_TARGET_SM90 = {
    .name = "sm_90", .sm = 0x90,
    .gpfifo_class = HOPPER_CHANNEL_GPFIFO_A, .compute_class = HOPPER_COMPUTE_A,
    .copy_class = HOPPER_DMA_COPY_A, .usermode_class = HOPPER_USERMODE_A,
    .gpfifo_class_name = "HOPPER_CHANNEL_GPFIFO_A", .compute_class_name = "HOPPER_COMPUTE_A",
    .usermode_class_name = "HOPPER_USERMODE_A",
    .usermode_takes_params = 1,
    .driver_branch = BOB_NV_DRIVER_BRANCH,
};

const bob_target_facts *bob_target_named(const char *name)
{
    static const bob_target_facts *const all[] = { &BOB_TARGET_SM86, &BOB_TARGET_SM90 };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        if (name && strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}
