/* Resource-manager escapes on /dev/nvidiactl and /dev/nvidiaN, and the
 * structures they carry, for driver branch 580.
 *
 * Written from ../shared/docs/nvidia-driver-facts.md (sections 1, 2) and the
 * open-gpu-kernel-modules (OGKM) headers named at each definition.  These are
 * our own definitions of the ABI; every size and offset the facts give is
 * pinned by a _Static_assert, so a layout mistake stops the build instead of
 * turning into NV_ERR_INVALID_PARAM_STRUCT on the GPU machine.
 *
 * The ABI is not stable across driver branches (facts section 2): this file
 * describes 580 only, and nv_shim.c refuses any other branch by name.
 */
#ifndef RT_NV_RM_H
#define RT_NV_RM_H

#include <stddef.h>
#include <stdint.h>

#define RT_NV_DRIVER_BRANCH 580u

typedef uint32_t NvHandle;

/* _IOWR('F', nr, size) (facts section 2). */
#define NV_IOCTL_MAGIC 'F'
#define NV_IOWR(nr, size) \
    ((unsigned long)((3u << 30) | ((uint32_t)(size) << 16) | ((uint32_t)NV_IOCTL_MAGIC << 8) | (uint32_t)(nr)))

/* RM escapes: OGKM src/nvidia/arch/nvalloc/unix/include/nv_escape.h */
#define NV_ESC_RM_ALLOC_MEMORY     0x27u
#define NV_ESC_RM_FREE             0x29u
#define NV_ESC_RM_CONTROL          0x2Au
#define NV_ESC_RM_ALLOC            0x2Bu
#define NV_ESC_RM_MAP_MEMORY       0x4Eu
#define NV_ESC_RM_UNMAP_MEMORY     0x4Fu
#define NV_ESC_RM_MAP_MEMORY_DMA   0x57u
#define NV_ESC_RM_UNMAP_MEMORY_DMA 0x58u
#define NV_ESC_RM_DUP_OBJECT       0x34u
#define NV_ESC_RM_SHARE            0x35u

/* OS escapes: OGKM kernel-open/common/inc/nv-ioctl-numbers.h (base 200) */
#define NV_ESC_CARD_INFO           200u
#define NV_ESC_REGISTER_FD         201u
#define NV_ESC_CHECK_VERSION_STR   210u
#define NV_ESC_ATTACH_GPUS_TO_FD   212u

/* NVOS21_PARAMETERS (RM_ALLOC), OGKM src/common/sdk/nvidia/inc/nvos.h.
 * status moved 24 -> 28 in 535 (facts section 2). */
typedef struct {
    NvHandle hRoot;            /* 0 */
    NvHandle hObjectParent;    /* 4 */
    NvHandle hObjectNew;       /* 8 */
    uint32_t hClass;           /* 12 */
    uint64_t pAllocParms;      /* 16 */
    uint32_t paramsSize;       /* 24 */
    uint32_t status;           /* 28 */
} rt_nvos21;
_Static_assert(sizeof(rt_nvos21) == 32, "NVOS21 is 32 bytes");
_Static_assert(offsetof(rt_nvos21, pAllocParms) == 16, "NVOS21.pAllocParms@16");
_Static_assert(offsetof(rt_nvos21, paramsSize) == 24, "NVOS21.paramsSize@24");
_Static_assert(offsetof(rt_nvos21, status) == 28, "NVOS21.status@28");

/* NVOS54_PARAMETERS (RM_CONTROL), nvos.h */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hObject;          /* 4 */
    uint32_t cmd;              /* 8 */
    uint32_t flags;            /* 12 */
    uint64_t params;           /* 16 */
    uint32_t paramsSize;       /* 24 */
    uint32_t status;           /* 28 */
} rt_nvos54;
_Static_assert(sizeof(rt_nvos54) == 32, "NVOS54 is 32 bytes");
_Static_assert(offsetof(rt_nvos54, params) == 16, "NVOS54.params@16");
_Static_assert(offsetof(rt_nvos54, paramsSize) == 24, "NVOS54.paramsSize@24");
_Static_assert(offsetof(rt_nvos54, status) == 28, "NVOS54.status@28");

/* NVOS00_PARAMETERS (RM_FREE), nvos.h */
typedef struct {
    NvHandle hRoot;
    NvHandle hObjectParent;
    NvHandle hObjectOld;
    uint32_t status;
} rt_nvos00;
_Static_assert(sizeof(rt_nvos00) == 16, "NVOS00 is 16 bytes");

/* NVOS33_PARAMETERS (RM_MAP_MEMORY) + the fd it is mapped through:
 * nvos.h and OGKM kernel-open/common/inc/nv-unix-nvos-params-wrappers.h */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hDevice;          /* 4 */
    NvHandle hMemory;          /* 8 */
    uint32_t pad0;
    uint64_t offset;           /* 16 */
    uint64_t length;           /* 24 */
    uint64_t pLinearAddress;   /* 32 */
    uint32_t status;           /* 40 */
    uint32_t flags;            /* 44 */
    int32_t  fd;               /* 48 */
    uint32_t pad1;
} rt_nvos33_with_fd;
_Static_assert(sizeof(rt_nvos33_with_fd) == 56, "NVOS33+fd is 56 bytes");
_Static_assert(offsetof(rt_nvos33_with_fd, offset) == 16, "NVOS33.offset@16");
_Static_assert(offsetof(rt_nvos33_with_fd, length) == 24, "NVOS33.length@24");
_Static_assert(offsetof(rt_nvos33_with_fd, pLinearAddress) == 32, "NVOS33.pLinearAddress@32");
_Static_assert(offsetof(rt_nvos33_with_fd, status) == 40, "NVOS33.status@40");
_Static_assert(offsetof(rt_nvos33_with_fd, flags) == 44, "NVOS33.flags@44");
_Static_assert(offsetof(rt_nvos33_with_fd, fd) == 48, "NVOS33 wrapper fd@48");

/* NVOS33 flags (nvos.h): MAPPING 16:15, CACHING_TYPE 25:23. */
#define NVOS33_FLAGS_MAPPING_DIRECT        (1u << 15)
#define NVOS33_FLAGS_CACHING_TYPE_SHIFT    23
#define NVOS33_FLAGS_CACHING_TYPE_DEFAULT  6u

/* NVOS34_PARAMETERS (RM_UNMAP_MEMORY), nvos.h */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hDevice;          /* 4 */
    NvHandle hMemory;          /* 8 */
    uint32_t pad0;
    uint64_t pLinearAddress;   /* 16 */
    uint32_t status;           /* 24 */
    uint32_t flags;            /* 28 */
} rt_nvos34;
_Static_assert(sizeof(rt_nvos34) == 32, "NVOS34 is 32 bytes");

/* NVOS46_PARAMETERS (RM_MAP_MEMORY_DMA), nvos.h.  Grew 56 -> 64 bytes in
 * 580.65 (flags2, kindOverride): facts section 2. */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hDevice;          /* 4 */
    NvHandle hDma;             /* 8 */
    NvHandle hMemory;          /* 12 */
    uint64_t offset;           /* 16 */
    uint64_t length;           /* 24 */
    uint32_t flags;            /* 32 */
    uint32_t flags2;           /* 36 */
    uint32_t kindOverride;     /* 40 */
    uint32_t pad0;
    uint64_t dmaOffset;        /* 48 */
    uint32_t status;           /* 56 */
    uint32_t pad1;
} rt_nvos46;
_Static_assert(sizeof(rt_nvos46) == 64, "NVOS46 is 64 bytes in 580");
_Static_assert(offsetof(rt_nvos46, flags) == 32, "NVOS46.flags@32");
_Static_assert(offsetof(rt_nvos46, dmaOffset) == 48, "NVOS46.dmaOffset@48");
_Static_assert(offsetof(rt_nvos46, status) == 56, "NVOS46.status@56");
_Static_assert(NV_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, sizeof(rt_nvos46)) == 0xC0404657ul,
               "MAP_MEMORY_DMA is 0xC0404657 on 580");

/* NVOS46 flags (nvos.h): PAGE_SIZE 11:8 (4KB = 1), CACHE_SNOOP 4:4,
 * DMA_OFFSET_FIXED 15:15. */
#define NVOS46_FLAGS_PAGE_SIZE_4KB        (1u << 8)
#define NVOS46_FLAGS_PAGE_SIZE_HUGE       (4u << 8)    /* 2 MiB (with the virtual range's attr2) */
#define NVOS46_FLAGS_CACHE_SNOOP_ENABLE   (1u << 4)
#define NVOS46_FLAGS_DMA_OFFSET_FIXED     (1u << 15)
#define NVOS46_FLAGS_PAGE_KIND_VIRTUAL    (1u << 3)    /* PAGE_KIND 3:3: the virtual allocation's kind */

/* NVOS47_PARAMETERS (RM_UNMAP_MEMORY_DMA), nvos.h */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hDevice;          /* 4 */
    NvHandle hDma;             /* 8 */
    NvHandle hMemory;          /* 12 */
    uint32_t flags;            /* 16 */
    uint32_t pad0;
    uint64_t dmaOffset;        /* 24 */
    uint64_t size;             /* 32 */
    uint32_t status;           /* 40 */
    uint32_t pad1;
} rt_nvos47;
_Static_assert(sizeof(rt_nvos47) == 48, "NVOS47 is 48 bytes");

/* nv_ioctl_card_info_t, OGKM kernel-open/common/inc/nv-ioctl.h (72 bytes). */
typedef struct {
    uint8_t  valid;            /* 0 (NvBool) */
    uint8_t  pad0[3];
    uint32_t pci_domain;       /* 4 */
    uint8_t  pci_bus;          /* 8 */
    uint8_t  pci_slot;         /* 9 */
    uint8_t  pci_function;     /* 10 */
    uint8_t  pad1;
    uint16_t pci_vendor_id;    /* 12 */
    uint16_t pci_device_id;    /* 14 */
    uint32_t gpu_id;           /* 16 */
    uint16_t interrupt_line;   /* 20 */
    uint16_t pad2;
    uint64_t reg_address;      /* 24 */
    uint64_t reg_size;         /* 32 */
    uint64_t fb_address;       /* 40 */
    uint64_t fb_size;          /* 48 */
    uint32_t minor_number;     /* 56 */
    uint8_t  dev_name[10];     /* 60 */
    uint8_t  pad4[2];
} rt_nv_card_info;
_Static_assert(sizeof(rt_nv_card_info) == 72, "nv_ioctl_card_info_t is 72 bytes");
_Static_assert(offsetof(rt_nv_card_info, gpu_id) == 16, "card_info.gpu_id@16");
_Static_assert(offsetof(rt_nv_card_info, minor_number) == 56, "card_info.minor_number@56");

/* nv_ioctl_register_fd_t, nv-ioctl.h */
typedef struct {
    int32_t ctl_fd;
} rt_nv_register_fd;
_Static_assert(sizeof(rt_nv_register_fd) == 4, "register_fd is 4 bytes");

/* NV0080_ALLOC_PARAMETERS, OGKM sdk class/cl0080.h */
typedef struct {
    uint32_t deviceId;         /* 0 */
    NvHandle hClientShare;     /* 4 */
    NvHandle hTargetClient;    /* 8 */
    NvHandle hTargetDevice;    /* 12 */
    uint32_t flags;            /* 16 */
    uint32_t pad0;
    uint64_t vaSpaceSize;      /* 24 */
    uint64_t vaStartInternal;  /* 32 */
    uint64_t vaLimitInternal;  /* 40 */
    uint32_t vaMode;           /* 48 */
    uint32_t pad1;
} rt_nv0080_alloc;
_Static_assert(sizeof(rt_nv0080_alloc) == 56, "NV0080_ALLOC_PARAMETERS is 56 bytes");
_Static_assert(offsetof(rt_nv0080_alloc, vaSpaceSize) == 24, "NV0080.vaSpaceSize@24");
_Static_assert(offsetof(rt_nv0080_alloc, vaMode) == 48, "NV0080.vaMode@48");
/* cl0080.h NV_DEVICE_ALLOCATION_VAMODE_* */
#define NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES 2u

/* NV2080_ALLOC_PARAMETERS, class/cl2080.h */
typedef struct {
    uint32_t subDeviceId;
} rt_nv2080_alloc;
_Static_assert(sizeof(rt_nv2080_alloc) == 4, "NV2080_ALLOC_PARAMETERS is 4 bytes");

/* NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, class/cl0070.h */
typedef struct {
    uint64_t offset;           /* 0 */
    uint64_t limit;            /* 8 */
    NvHandle hVASpace;         /* 16 */
    uint32_t pad0;
} rt_nv_memory_virtual_alloc;
_Static_assert(sizeof(rt_nv_memory_virtual_alloc) == 24, "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS is 24 bytes");

/* NV_VASPACE_ALLOCATION_PARAMETERS, OGKM sdk nvos.h; 48 -> 56 bytes in 580
 * (pasid): facts section 2. */
typedef struct {
    uint32_t index;            /* 0 */
    uint32_t flags;            /* 4 */
    uint64_t vaSize;           /* 8 */
    uint64_t vaStartInternal;  /* 16 */
    uint64_t vaLimitInternal;  /* 24 */
    uint32_t bigPageSize;      /* 32 */
    uint32_t pad0;
    uint64_t vaBase;           /* 40 */
    uint32_t pasid;            /* 48 */
    uint32_t pad1;
} rt_nv_vaspace_alloc;
_Static_assert(sizeof(rt_nv_vaspace_alloc) == 56, "NV_VASPACE_ALLOCATION_PARAMETERS is 56 bytes in 580");
_Static_assert(offsetof(rt_nv_vaspace_alloc, vaBase) == 40, "VASPACE.vaBase@40");
#define NV_VASPACE_ALLOCATION_FLAGS_NONE                  0u        /* the RM owns the page tables */
#define NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED   (1u << 3)
#define NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING  (1u << 6)
#define RT_VASPACE_BASE 0x1000ull
#define RT_VASPACE_SIZE 0x1fffffb000000ull

/* NV_MEMORY_ALLOCATION_PARAMS (NV01_MEMORY_SYSTEM / NV01_MEMORY_LOCAL_USER),
 * sdk nvos.h, 128 bytes (facts section 1.9). */
typedef struct {
    uint32_t owner;            /* 0 */
    uint32_t type;             /* 4 */
    uint32_t flags;            /* 8 */
    uint32_t width;            /* 12 */
    uint32_t height;           /* 16 */
    int32_t  pitch;            /* 20 */
    uint32_t attr;             /* 24 */
    uint32_t attr2;            /* 28 */
    uint32_t format;           /* 32 */
    uint32_t comprCovg;        /* 36 */
    uint32_t zcullCovg;        /* 40 */
    uint32_t pad0;
    uint64_t rangeLo;          /* 48 */
    uint64_t rangeHi;          /* 56 */
    uint64_t size;             /* 64 */
    uint64_t alignment;        /* 72 */
    uint64_t offset;           /* 80 */
    uint64_t limit;            /* 88 */
    uint64_t address;          /* 96 */
    uint32_t ctagOffset;       /* 104 */
    NvHandle hVASpace;         /* 108 */
    uint32_t internalflags;    /* 112 */
    uint32_t tag;              /* 116 */
    int32_t  numaNode;         /* 120 */
    uint32_t pad1;
} rt_nv_memory_alloc;
_Static_assert(sizeof(rt_nv_memory_alloc) == 128, "NV_MEMORY_ALLOCATION_PARAMS is 128 bytes");
_Static_assert(offsetof(rt_nv_memory_alloc, attr) == 24, "MEMORY_ALLOCATION.attr@24");
_Static_assert(offsetof(rt_nv_memory_alloc, attr2) == 28, "MEMORY_ALLOCATION.attr2@28");
_Static_assert(offsetof(rt_nv_memory_alloc, format) == 32, "MEMORY_ALLOCATION.format@32");
_Static_assert(offsetof(rt_nv_memory_alloc, size) == 64, "MEMORY_ALLOCATION.size@64");
_Static_assert(offsetof(rt_nv_memory_alloc, alignment) == 72, "MEMORY_ALLOCATION.alignment@72");
_Static_assert(offsetof(rt_nv_memory_alloc, offset) == 80, "MEMORY_ALLOCATION.offset@80");
_Static_assert(offsetof(rt_nv_memory_alloc, limit) == 88, "MEMORY_ALLOCATION.limit@88");
_Static_assert(offsetof(rt_nv_memory_alloc, hVASpace) == 108, "MEMORY_ALLOCATION.hVASpace@108");

/* NVOS32 type / attr / flags (nvos.h): attr PAGE_SIZE 24:23, LOCATION 26:25,
 * PHYSICALITY 28:27, COHERENCY 31:29. */
#define NVOS32_TYPE_IMAGE                    0u
#define NVOS32_ATTR_PAGE_SIZE_4KB            (1u << 23)
#define NVOS32_ATTR_PAGE_SIZE_HUGE           (3u << 23)   /* with attr2 PAGE_SIZE_HUGE 21:20 */
#define NVOS32_ATTR_LOCATION_VIDMEM          (0u << 25)
#define NVOS32_ATTR_LOCATION_PCI             (1u << 25)
#define NVOS32_ATTR_PHYSICALITY_NONCONTIGUOUS (1u << 27)
#define NVOS32_ATTR_PHYSICALITY_CONTIGUOUS   (2u << 27)
#define NVOS32_ATTR_COHERENCY_UNCACHED       (0u << 29)
#define NVOS32_ATTR_COHERENCY_CACHED         (1u << 29)
#define NVOS32_TYPE_NOTIFIER                 13u
#define NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS (3u << 27)
#define NVOS32_ATTR2_ZBC_PREFER_NO_ZBC       (1u << 0)
#define NVOS32_ATTR2_GPU_CACHEABLE_YES       (1u << 2)
#define NVOS32_ATTR2_GPU_CACHEABLE_NO        (2u << 2)
#define NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB      (1u << 20)
#define NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT 0x00000001u
#define NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED 0x00004000u
#define NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE   0x00000100u
#define NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED  0x00008000u
#define NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM 0x00010000u
/* NV50_MEMORY_VIRTUAL (nvos.h): a VA range in NV_MEMORY_ALLOCATION_PARAMS.hVASpace,
 * at .offset when FIXED_ADDRESS_ALLOCATE (virtual_mem.c requires ALLOC_FLAGS_VIRTUAL) */
#define NVOS32_ALLOC_FLAGS_FIXED_ADDRESS_ALLOCATE 0x00000010u
#define NVOS32_ALLOC_FLAGS_VIRTUAL           0x00080000u

/* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, OGKM sdk nvos.h (KEPLER_CHANNEL_GROUP_A's
 * parameters; class/cla06c.h holds only the class ID): 20 bytes (facts section 1.8). */
typedef struct {
    NvHandle hObjectError;     /* 0 */
    NvHandle hObjectEccError;  /* 4 */
    NvHandle hVASpace;         /* 8 */
    uint32_t engineType;       /* 12 */
    uint8_t  bIsCallingContextVgpuPlugin; /* 16 */
    uint8_t  pad0[3];
} rt_nv_channel_group_alloc;
_Static_assert(sizeof(rt_nv_channel_group_alloc) == 20, "NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS is 20 bytes");
#define NV2080_ENGINE_TYPE_GRAPHICS 1u

/* NV_CTXSHARE_ALLOCATION_PARAMETERS, OGKM sdk nvos.h (FERMI_CONTEXT_SHARE_A's parameters;
 * class/cl9067.h holds only the class ID), 12 bytes. */
typedef struct {
    NvHandle hVASpace;
    uint32_t flags;
    uint32_t subctxId;
} rt_nv_ctxshare_alloc;
_Static_assert(sizeof(rt_nv_ctxshare_alloc) == 12, "NV_CTXSHARE_ALLOCATION_PARAMETERS is 12 bytes");
#define NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC 1u

/* NV_MEMORY_DESC_PARAMS, sdk alloc/alloc_channel.h (24 bytes). */
typedef struct {
    uint64_t base;
    uint64_t size;
    uint32_t addressSpace;
    uint32_t cacheAttrib;
} rt_nv_memory_desc;
_Static_assert(sizeof(rt_nv_memory_desc) == 24, "NV_MEMORY_DESC_PARAMS is 24 bytes");

/* NV_CHANNEL_ALLOC_PARAMS, OGKM sdk alloc/alloc_channel.h, 580 layout
 * (NV_MAX_SUBDEVICES = 8; no hHandleVASpace, which 610 inserts at 32). */
#define RT_NV_MAX_SUBDEVICES 8
typedef struct {
    NvHandle hObjectError;     /* 0 */
    NvHandle hObjectBuffer;    /* 4 */
    uint64_t gpFifoOffset;     /* 8 */
    uint32_t gpFifoEntries;    /* 16 */
    uint32_t flags;            /* 20 */
    NvHandle hContextShare;    /* 24 */
    NvHandle hVASpace;         /* 28 */
    NvHandle hUserdMemory[RT_NV_MAX_SUBDEVICES];  /* 32 */
    uint64_t userdOffset[RT_NV_MAX_SUBDEVICES];   /* 64 */
    uint32_t engineType;       /* 128 */
    uint32_t cid;              /* 132 */
    uint32_t subDeviceId;      /* 136 */
    NvHandle hObjectEccError;  /* 140 */
    rt_nv_memory_desc instanceMem;   /* 144 */
    rt_nv_memory_desc userdMem;      /* 168 */
    rt_nv_memory_desc ramfcMem;      /* 192 */
    rt_nv_memory_desc mthdbufMem;    /* 216 */
    NvHandle hPhysChannelGroup;       /* 240 */
    uint32_t internalFlags;           /* 244 */
    rt_nv_memory_desc errorNotifierMem;     /* 248 */
    rt_nv_memory_desc eccErrorNotifierMem;  /* 272 */
    uint32_t ProcessID;        /* 296 */
    uint32_t SubProcessID;     /* 300 */
    uint32_t encryptIv[3];     /* 304 */
    uint32_t decryptIv[3];     /* 316 */
    uint32_t hmacNonce[8];     /* 328 */
    uint32_t tpcConfigID;      /* 360 */
    uint32_t pad0;
} rt_nv_channel_alloc;
_Static_assert(sizeof(rt_nv_channel_alloc) == 368, "NV_CHANNEL_ALLOC_PARAMS is 368 bytes in 580");
_Static_assert(offsetof(rt_nv_channel_alloc, gpFifoOffset) == 8, "CHANNEL.gpFifoOffset@8");
_Static_assert(offsetof(rt_nv_channel_alloc, hContextShare) == 24, "CHANNEL.hContextShare@24");
_Static_assert(offsetof(rt_nv_channel_alloc, hUserdMemory) == 32, "CHANNEL.hUserdMemory@32");
_Static_assert(offsetof(rt_nv_channel_alloc, userdOffset) == 64, "CHANNEL.userdOffset@64");
_Static_assert(offsetof(rt_nv_channel_alloc, engineType) == 128, "CHANNEL.engineType@128");
_Static_assert(offsetof(rt_nv_channel_alloc, instanceMem) == 144, "CHANNEL.instanceMem@144");
_Static_assert(offsetof(rt_nv_channel_alloc, tpcConfigID) == 360, "CHANNEL.tpcConfigID@360");

/* NV_HOPPER_USERMODE_A_PARAMS, OGKM sdk nvos.h {bBar1Mapping, bPriv} (HOPPER_USERMODE_A's
 * parameters; class/clc661.h holds only the class ID). */
typedef struct {
    uint8_t bBar1Mapping;
    uint8_t bPriv;
} rt_nv_hopper_usermode_alloc;
_Static_assert(sizeof(rt_nv_hopper_usermode_alloc) == 2, "NV_HOPPER_USERMODE_A_PARAMS is 2 bytes");

/* NvNotification, sdk nvgputypes.h (16 bytes): the channel's error notifier
 * (index NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR = 0). */
typedef struct {
    uint32_t timeStampLo;      /* 0 */
    uint32_t timeStampHi;      /* 4 */
    uint32_t info32;           /* 8: the RC error (Xid) */
    uint16_t info16;           /* 12 */
    uint16_t status;           /* 14: 0 while no error */
} rt_nv_notification;
_Static_assert(sizeof(rt_nv_notification) == 16, "NvNotification is 16 bytes");
_Static_assert(offsetof(rt_nv_notification, info32) == 8, "NvNotification.info32@8");
_Static_assert(offsetof(rt_nv_notification, status) == 14, "NvNotification.status@14");

/* USERD (Ampere and Hopper, facts section 4): GPGet at 0x88, GPPut at 0x8C;
 * the usermode doorbell NOTIFY_CHANNEL_PENDING at +0x90. */
#define RT_USERD_GP_GET        0x88u
#define RT_USERD_GP_PUT        0x8Cu
#define RT_USERD_BYTES         0x200u
#define RT_USERMODE_DOORBELL   0x90u
#define RT_USERMODE_MAP_BYTES  0x10000u


/* NVOS55_PARAMETERS (RM_DUP_OBJECT), nvos.h: the object hObjectSrc of client
 * hClientSrc becomes hObject under hParent in client hClient. */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hParent;          /* 4 */
    NvHandle hObject;          /* 8 */
    NvHandle hClientSrc;       /* 12 */
    NvHandle hObjectSrc;       /* 16 */
    uint32_t flags;            /* 20 */
    uint32_t status;           /* 24 */
} rt_nvos55;
_Static_assert(sizeof(rt_nvos55) == 28, "NVOS55 is 28 bytes");

/* NVOS57_PARAMETERS (RM_SHARE), nvos.h, with RS_SHARE_POLICY (rs_access.h):
 * who else may take which rights (RS_ACCESS_DUP_OBJECT = bit 0) on hObject. */
typedef struct {
    NvHandle hClient;          /* 0 */
    NvHandle hObject;          /* 4 */
    uint32_t target;           /* 8: RS_SHARE_POLICY.target */
    uint32_t accessMask;       /* 12: RS_ACCESS_MASK, one limb */
    uint16_t type;             /* 16: RS_SHARE_TYPE_* */
    uint8_t  action;           /* 18: RS_SHARE_ACTION_FLAG_* */
    uint8_t  pad;
    uint32_t status;           /* 20 */
} rt_nvos57;
_Static_assert(sizeof(rt_nvos57) == 24, "NVOS57 is 24 bytes");
#define RS_ACCESS_DUP_OBJECT_BIT          1u
#define RS_SHARE_TYPE_OS_SECURITY_TOKEN   2u
#define RS_SHARE_ACTION_FLAG_COMPOSE      4u

#endif
