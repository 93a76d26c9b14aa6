/* RM object classes, and the per-target table of facts the shim reads.
 *
 * Class IDs: OGKM src/nvidia/generated/g_gpu_class_list.c and the sdk
 * class/clXXXX.h headers (facts section 1, and the class list measured on
 * the H200).  Targets are rows of a table chosen once at bring-up, as in
 * compiler/bobc/targets.py: nothing in the shim asks "is this sm_90?".
 */
#ifndef RT_NV_CLASSES_H
#define RT_NV_CLASSES_H

#include <stdint.h>

#define NV01_ROOT_CLIENT          0x00000041u
#define NV01_MEMORY_SYSTEM        0x0000003Eu
#define NV01_MEMORY_LOCAL_USER    0x00000040u
#define NV01_MEMORY_VIRTUAL       0x00000070u
#define NV50_MEMORY_VIRTUAL       0x000050A0u  /* class/cl50a0.h: a VA range, NV_MEMORY_ALLOCATION_PARAMS */
#define NV01_DEVICE_0             0x00000080u
#define NV20_SUBDEVICE_0          0x00002080u
#define FERMI_CONTEXT_SHARE_A     0x00009067u
#define FERMI_VASPACE_A           0x000090F1u
#define KEPLER_CHANNEL_GROUP_A    0x0000A06Cu

#define TURING_USERMODE_A         0x0000C461u
#define HOPPER_USERMODE_A         0x0000C661u
#define AMPERE_CHANNEL_GPFIFO_A   0x0000C56Fu
#define HOPPER_CHANNEL_GPFIFO_A   0x0000C86Fu
#define AMPERE_COMPUTE_A          0x0000C6C0u  /* GA100: named only (bobc.targets.CLASS_NAMES) */
#define AMPERE_COMPUTE_B          0x0000C7C0u
#define HOPPER_COMPUTE_A          0x0000CBC0u
#define ADA_COMPUTE_A             0x0000C9C0u  /* AD10x: named only */
#define BLACKWELL_COMPUTE_A       0x0000CDC0u  /* GB100: named only */
#define BLACKWELL_COMPUTE_B       0x0000CEC0u  /* GB20x: named only */
#define AMPERE_DMA_COPY_B         0x0000C7B5u
#define HOPPER_DMA_COPY_A         0x0000C8B5u

/* One row per build target: the facts the shim needs to bring a GPU up. */
typedef struct rt_target_facts {
    const char *name;            /* "sm_86", "sm_90" */
    unsigned    sm;              /* 0x86, 0x90 */
    uint32_t    gpfifo_class;
    uint32_t    compute_class;
    uint32_t    copy_class;
    uint32_t    usermode_class;
    const char *gpfifo_class_name;
    const char *compute_class_name;
    const char *usermode_class_name;
    /* 1 when the usermode object takes NV_HOPPER_USERMODE_A_PARAMS
     * {bBar1Mapping = 1, bPriv = 0}. */
    int         usermode_takes_params;
    unsigned    driver_branch;   /* the branch whose ABI this build speaks */
} rt_target_facts;

extern const rt_target_facts RT_TARGET_SM86;
extern const rt_target_facts RT_TARGET_SM90;

/* NULL when unknown. */
const rt_target_facts *rt_target_named(const char *name);

/* A compute class the RM may list, and the GPUs it means (bobc.targets.COMPUTE_CLASS_GPUS):
 * what a host refusing a GPU says it found. */
typedef struct rt_compute_class_facts {
    uint32_t    compute_class;
    const char *name;                   /* "ADA_COMPUTE_A" */
    const char *gpus;                   /* "Ada AD10x (RTX 40xx, L4, L40)" */
    const char *compute_capability;     /* "8.9" */
} rt_compute_class_facts;

/* NULL when the class is not a compute class of the table. */
const rt_compute_class_facts *rt_compute_class(uint32_t compute_class);
/* The target whose compute class this is; NULL when bobc has none for it. */
const rt_target_facts *rt_target_for_compute_class(uint32_t compute_class);
/* "sm_86, sm_90": every target's name. */
const char *rt_target_names(void);

#endif
