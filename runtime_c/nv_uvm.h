/* /dev/nvidia-uvm ioctls and their parameter blocks, driver branch 580.
 *
 * Source: OGKM kernel-open/nvidia-uvm/uvm_ioctl.h and uvm_linux_ioctl.h; on
 * Linux the ioctl request is the plain command number (facts section 2).
 * Our own definitions, sizes pinned by _Static_assert.
 */
#ifndef RT_NV_UVM_H
#define RT_NV_UVM_H

#include <stddef.h>
#include <stdint.h>

#define UVM_INITIALIZE               0x30000001ul
#define UVM_DEINITIALIZE             0x30000002ul
#define UVM_REGISTER_GPU_VASPACE     25ul
#define UVM_UNREGISTER_GPU_VASPACE   26ul
#define UVM_REGISTER_CHANNEL         27ul
#define UVM_UNREGISTER_CHANNEL       28ul
#define UVM_MAP_EXTERNAL_ALLOCATION  33ul
#define UVM_FREE                     34ul
#define UVM_REGISTER_GPU             37ul
#define UVM_UNREGISTER_GPU           38ul
#define UVM_CREATE_EXTERNAL_RANGE    73ul
#define UVM_MM_INITIALIZE            75ul

/* UVM_INITIALIZE_PARAMS {u64 flags; NV_STATUS rmStatus} (16 bytes). */
typedef struct {
    uint64_t flags;
    uint32_t rmStatus;
    uint32_t pad0;
} rt_uvm_initialize;
_Static_assert(sizeof(rt_uvm_initialize) == 16, "UVM_INITIALIZE_PARAMS is 16 bytes");

/* UVM_MM_INITIALIZE_PARAMS {NvS32 uvmFd; NV_STATUS rmStatus}. */
typedef struct {
    int32_t  uvmFd;
    uint32_t rmStatus;
} rt_uvm_mm_initialize;
_Static_assert(sizeof(rt_uvm_mm_initialize) == 8, "UVM_MM_INITIALIZE_PARAMS is 8 bytes");

/* UVM_REGISTER_GPU_PARAMS {uuid; numaEnabled; numaNodeId; rmCtrlFd; hClient;
 * hSmcPartRef; rmStatus}. */
typedef struct {
    uint8_t  gpu_uuid[16];     /* 0 */
    uint8_t  numaEnabled;      /* 16 */
    uint8_t  pad0[3];
    int32_t  numaNodeId;       /* 20 */
    int32_t  rmCtrlFd;         /* 24 */
    uint32_t hClient;          /* 28 */
    uint32_t hSmcPartRef;      /* 32 */
    uint32_t rmStatus;         /* 36 */
} rt_uvm_register_gpu;
_Static_assert(sizeof(rt_uvm_register_gpu) == 40, "UVM_REGISTER_GPU_PARAMS is 40 bytes");
_Static_assert(offsetof(rt_uvm_register_gpu, rmCtrlFd) == 24, "REGISTER_GPU.rmCtrlFd@24");

/* UVM_UNREGISTER_GPU_PARAMS {uuid; rmStatus}. */
typedef struct {
    uint8_t  gpu_uuid[16];
    uint32_t rmStatus;
} rt_uvm_unregister_gpu;
_Static_assert(sizeof(rt_uvm_unregister_gpu) == 20, "UVM_UNREGISTER_GPU_PARAMS is 20 bytes");

/* UVM_REGISTER_GPU_VASPACE_PARAMS (32 bytes, facts section 1.7). */
typedef struct {
    uint8_t  gpuUuid[16];      /* 0 */
    int32_t  rmCtrlFd;         /* 16 */
    uint32_t hClient;          /* 20 */
    uint32_t hVaSpace;         /* 24 */
    uint32_t rmStatus;         /* 28 */
} rt_uvm_register_gpu_vaspace;
_Static_assert(sizeof(rt_uvm_register_gpu_vaspace) == 32, "UVM_REGISTER_GPU_VASPACE_PARAMS is 32 bytes");

/* UVM_UNREGISTER_GPU_VASPACE_PARAMS {uuid; rmStatus}. */
typedef struct {
    uint8_t  gpuUuid[16];
    uint32_t rmStatus;
} rt_uvm_unregister_gpu_vaspace;
_Static_assert(sizeof(rt_uvm_unregister_gpu_vaspace) == 20, "UVM_UNREGISTER_GPU_VASPACE_PARAMS is 20 bytes");

/* UVM_REGISTER_CHANNEL_PARAMS (56 bytes, facts section 1.14). */
typedef struct {
    uint8_t  gpuUuid[16];      /* 0 */
    int32_t  rmCtrlFd;         /* 16 */
    uint32_t hClient;          /* 20 */
    uint32_t hChannel;         /* 24 */
    uint32_t pad0;
    uint64_t base;             /* 32 */
    uint64_t length;           /* 40 */
    uint32_t rmStatus;         /* 48 */
    uint32_t pad1;
} rt_uvm_register_channel;
_Static_assert(sizeof(rt_uvm_register_channel) == 56, "UVM_REGISTER_CHANNEL_PARAMS is 56 bytes");
_Static_assert(offsetof(rt_uvm_register_channel, base) == 32, "REGISTER_CHANNEL.base@32");

/* UVM_UNREGISTER_CHANNEL_PARAMS {uuid; hClient; hChannel; rmStatus}. */
typedef struct {
    uint8_t  gpuUuid[16];
    uint32_t hClient;
    uint32_t hChannel;
    uint32_t rmStatus;
} rt_uvm_unregister_channel;
_Static_assert(sizeof(rt_uvm_unregister_channel) == 28, "UVM_UNREGISTER_CHANNEL_PARAMS is 28 bytes");

/* UVM_CREATE_EXTERNAL_RANGE_PARAMS {base; length; rmStatus} (24 bytes). */
typedef struct {
    uint64_t base;
    uint64_t length;
    uint32_t rmStatus;
    uint32_t pad0;
} rt_uvm_create_external_range;
_Static_assert(sizeof(rt_uvm_create_external_range) == 24, "UVM_CREATE_EXTERNAL_RANGE_PARAMS is 24 bytes");

/* UvmGpuMappingAttributes (36 bytes). */
typedef struct {
    uint8_t  gpuUuid[16];
    uint32_t gpuMappingType;      /* 1: UvmGpuMappingTypeReadWriteAtomic */
    uint32_t gpuCachingType;
    uint32_t gpuFormatType;
    uint32_t gpuElementBits;
    uint32_t gpuCompressionType;
} rt_uvm_gpu_mapping_attributes;
_Static_assert(sizeof(rt_uvm_gpu_mapping_attributes) == 36, "UvmGpuMappingAttributes is 36 bytes");
#define UVM_GPU_MAPPING_TYPE_READ_WRITE_ATOMIC 1u

/* UVM_MAP_EXTERNAL_ALLOCATION_PARAMS: perGpuAttributes[256] since 550.54,
 * 9264 bytes, gpuAttributesCount at 9240 (facts section 1.11). */
#define RT_UVM_MAX_GPUS_V2 256
typedef struct {
    uint64_t base;             /* 0 */
    uint64_t length;           /* 8 */
    uint64_t offset;           /* 16 */
    rt_uvm_gpu_mapping_attributes perGpuAttributes[RT_UVM_MAX_GPUS_V2]; /* 24 */
    uint64_t gpuAttributesCount; /* 9240 */
    int32_t  rmCtrlFd;         /* 9248 */
    uint32_t hClient;          /* 9252 */
    uint32_t hMemory;          /* 9256 */
    uint32_t rmStatus;         /* 9260 */
} rt_uvm_map_external_allocation;
_Static_assert(sizeof(rt_uvm_map_external_allocation) == 9264, "UVM_MAP_EXTERNAL_ALLOCATION_PARAMS is 9264 bytes");
_Static_assert(offsetof(rt_uvm_map_external_allocation, gpuAttributesCount) == 9240,
               "MAP_EXTERNAL_ALLOCATION.gpuAttributesCount@9240");

/* UVM_FREE_PARAMS {base; length; rmStatus} (580 still has length; 590.44
 * drops it: facts section 2). */
typedef struct {
    uint64_t base;
    uint64_t length;
    uint32_t rmStatus;
    uint32_t pad0;
} rt_uvm_free;
_Static_assert(sizeof(rt_uvm_free) == 24, "UVM_FREE_PARAMS is 24 bytes in 580");

#endif
