/* RM control commands (NV_ESC_RM_CONTROL) the shim issues, and their
 * parameter blocks.  RM_CONTROL checks paramsSize exactly (a mismatch is
 * NV_ERR_INVALID_PARAM_STRUCT), so every size here is pinned.
 *
 * Sources (OGKM src/common/sdk/nvidia/inc/ctrl/...): ctrl0000system.h,
 * ctrl0000gpu.h, ctrl0080gpu.h, ctrl2080gpu.h, ctrla06c.h, ctrlc36f.h.
 */
#ifndef RT_NV_CTRL_H
#define RT_NV_CTRL_H

#include <stddef.h>
#include <stdint.h>

/* NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 (0x13e) on the client.  Two
 * layouts are published: three 256-byte strings (776 bytes) and, in later
 * headers, four (a driverBranch string, 1032 bytes: OGKM 580.105.08's
 * ctrl0000system.h).  The shim asks with the 1032-byte layout first and, on any
 * error, with the 776-byte one; failing both, it reads /proc/driver/nvidia/version
 * (nv_shim.c check_driver_version). */
#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 0x13Eu
typedef struct {
    char     driverVersionBuffer[256];
    char     versionBuffer[256];
    char     titleBuffer[256];
    uint32_t changelistNumber;
    uint32_t officialChangelistNumber;
} rt_nv0000_build_version_v2;
_Static_assert(sizeof(rt_nv0000_build_version_v2) == 776, "GET_BUILD_VERSION_V2 (3 strings) is 776 bytes");
typedef struct {
    char     driverVersionBuffer[256];
    char     versionBuffer[256];
    char     driverBranch[256];
    char     titleBuffer[256];
    uint32_t changelistNumber;
    uint32_t officialChangelistNumber;
} rt_nv0000_build_version_v2_branch;
_Static_assert(sizeof(rt_nv0000_build_version_v2_branch) == 1032, "GET_BUILD_VERSION_V2 (4 strings) is 1032 bytes");

/* NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 (0x205): gpuId -> deviceInstance. */
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 0x205u
typedef struct {
    uint32_t gpuId;            /* 0 */
    uint32_t gpuFlags;         /* 4 */
    uint32_t deviceInstance;   /* 8 */
    uint32_t subDeviceInstance;/* 12 */
    uint32_t sliStatus;        /* 16 */
    uint32_t boardId;          /* 20 */
    uint32_t gpuInstance;      /* 24 */
    int32_t  numaId;           /* 28 */
} rt_nv0000_gpu_id_info_v2;
_Static_assert(sizeof(rt_nv0000_gpu_id_info_v2) == 32, "GET_ID_INFO_V2 is 32 bytes");

/* NV0080_CTRL_CMD_GPU_GET_CLASSLIST (0x800201) on the device: numClasses,
 * then an embedded pointer to a u32 array (asked twice: count, then list). */
#define NV0080_CTRL_CMD_GPU_GET_CLASSLIST 0x800201u
typedef struct {
    uint32_t numClasses;       /* 0 */
    uint32_t pad0;
    uint64_t classList;        /* 8 (NvP64) */
} rt_nv0080_classlist;
_Static_assert(sizeof(rt_nv0080_classlist) == 16, "GET_CLASSLIST params are 16 bytes");

/* NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID (0x275) on the root client: an attached
 * GPU's UUID by its gpuId (OGKM ctrl0000gpu.h; FORMAT 1:0 BINARY = 2, TYPE 2:2 SHA1 = 0). */
#define NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID 0x275u
#define NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID_FLAGS_FORMAT_BINARY 2u
typedef struct {
    uint32_t gpuId;
    uint32_t flags;
    uint8_t gpuUuid[256];
    uint32_t uuidStrLen;
} rt_nv0000_uuid_from_gpu_id;
_Static_assert(sizeof(rt_nv0000_uuid_from_gpu_id) == 268, "GET_UUID_FROM_GPU_ID params are 268 bytes");

/* NV2080_CTRL_CMD_GPU_GET_GID_INFO (0x2080014a) on the subdevice: the GPU
 * UUID, binary format (flags FORMAT 1:0 = BINARY 2), 16 bytes. */
#define NV2080_CTRL_CMD_GPU_GET_GID_INFO 0x2080014Au
#define NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY 2u
typedef struct {
    uint32_t index;            /* 0 */
    uint32_t flags;            /* 4 */
    uint32_t length;           /* 8 */
    uint8_t  data[256];        /* 12 */
} rt_nv2080_gid_info;
_Static_assert(sizeof(rt_nv2080_gid_info) == 268, "GET_GID_INFO params are 268 bytes");

/* NVA06C_CTRL_CMD_GPFIFO_SCHEDULE (0xa06c0101) on the channel group. */
#define NVA06C_CTRL_CMD_GPFIFO_SCHEDULE 0xA06C0101u
typedef struct {
    uint8_t bEnable;
    uint8_t bSkipSubmit;
    uint8_t bSkipEnable;
} rt_nva06c_schedule;
_Static_assert(sizeof(rt_nva06c_schedule) == 3, "GPFIFO_SCHEDULE params are 3 bytes");

/* NVA06C_CTRL_CMD_SET_TIMESLICE / GET_TIMESLICE (0xa06c0103 / 0xa06c0104) on the channel
 * group (ctrla06c.h: NVA06C_CTRL_TIMESLICE_PARAMS; NON_PRIVILEGED).  The driver's default for a
 * group is NV_RAMRL_ENTRY_TSG_TIMESLICE_TIMEOUT_128 << SCALE_3 = 1024 us
 * (kfifoChannelGroupGetDefaultTimeslice_GV100); the hardware rounds a value down. */
#define NVA06C_CTRL_CMD_SET_TIMESLICE 0xA06C0103u
#define NVA06C_CTRL_CMD_GET_TIMESLICE 0xA06C0104u
typedef struct {
    uint64_t timesliceUs;
} rt_nva06c_timeslice;
_Static_assert(sizeof(rt_nva06c_timeslice) == 8, "TIMESLICE params are 8 bytes");

/* NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE (0x20801210) on the subdevice
 * (ctrl2080gr.h): a channel's compute preemption mode (flags bit 0: CILP_SET;
 * mode 0 WFI, 1 CTA, 2 CILP). */
#define NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE 0x20801210u
typedef struct {
    uint32_t flags;            /* 0 */
    uint32_t hChannel;         /* 4 */
    uint32_t gfxpPreemptMode;  /* 8 */
    uint32_t cilpPreemptMode;  /* 12 */
    uint32_t routeFlags;       /* 16: NV2080_CTRL_GR_ROUTE_INFO.flags (0: none) */
    uint32_t pad;
    uint64_t route;            /* 24 */
} rt_nv2080_preemption_mode;
_Static_assert(sizeof(rt_nv2080_preemption_mode) == 32, "SET_CTXSW_PREEMPTION_MODE params are 32 bytes");

/* NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN (0xc36f0108) on the channel. */
#define NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN 0xC36F0108u
typedef struct {
    uint32_t workSubmitToken;
} rt_nvc36f_work_submit_token;
_Static_assert(sizeof(rt_nvc36f_work_submit_token) == 4, "GET_WORK_SUBMIT_TOKEN params are 4 bytes");

#endif
