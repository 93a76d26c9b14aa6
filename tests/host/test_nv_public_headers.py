"""runtime_c's driver facts held against NVIDIA's public headers, as numbers recorded here.

The shim's own _Static_asserts pin the sizes and offsets it was written with; this test pins
them, and the status names, to the open-gpu-kernel-modules (OGKM) headers of the branch the
shim speaks.  The numbers below were read off OGKM tag 580.142 (src/common/sdk/nvidia/inc,
kernel-open/common/inc, kernel-open/nvidia-uvm, src/nvidia/arch/nvalloc/unix/include) by
compiling sizeof/offsetof of the public structs with gcc on x86-64; every struct's layout is the
same in all 21 580 tags from 580.65.06 to 580.142 (checked the same way).  CI has no copy of
those headers, so the numbers are written down with the file:line they come from; no NVIDIA
code is in the project.  Our fields are matched to theirs by name (NVOS33+fd's fields are its
`params.` members, card_info's pci_* its `pci_info.` members, NvNotification's timeStampLo/Hi
its timeStamp.nanoseconds[0]/[1], NVOS57's target..action its `sharePolicy.` members,
the preemption-mode route fields its `grRouteInfo.` members).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"

# (our struct, the public struct, where 580.142 defines it, its sizeof, {our field: offsetof the public one})
LAYOUTS = [
    ("rt_nvos21", "NVOS21_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:471", 32,
     {"hRoot": 0, "hObjectParent": 4, "hObjectNew": 8, "hClass": 12, "pAllocParms": 16, "paramsSize": 24, "status": 28}),
    ("rt_nvos54", "NVOS54_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:2238", 32,
     {"hClient": 0, "hObject": 4, "cmd": 8, "flags": 12, "params": 16, "paramsSize": 24, "status": 28}),
    ("rt_nvos00", "NVOS00_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:166", 16,
     {"hRoot": 0, "hObjectParent": 4, "hObjectOld": 8, "status": 12}),
    ("rt_nvos33_with_fd", "nv_ioctl_nvos33_parameters_with_fd", "src/nvidia/arch/nvalloc/unix/include/nv-unix-nvos-params-wrappers.h:46", 56,
     {"hClient": 0, "hDevice": 4, "hMemory": 8, "offset": 16, "length": 24, "pLinearAddress": 32, "status": 40, "flags": 44, "fd": 48}),
    ("rt_nvos34", "NVOS34_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:1869", 32,
     {"hClient": 0, "hDevice": 4, "hMemory": 8, "pLinearAddress": 16, "status": 24, "flags": 28}),
    ("rt_nvos46", "NVOS46_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:2183", 64,
     {"hClient": 0, "hDevice": 4, "hDma": 8, "hMemory": 12, "offset": 16, "length": 24, "flags": 32, "flags2": 36, "kindOverride": 40, "dmaOffset": 48, "status": 56}),
    ("rt_nvos47", "NVOS47_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:2205", 48,
     {"hClient": 0, "hDevice": 4, "hDma": 8, "hMemory": 12, "flags": 16, "dmaOffset": 24, "size": 32, "status": 40}),
    ("rt_nv_card_info", "nv_ioctl_card_info_t", "kernel-open/common/inc/nv-ioctl.h:66", 72,
     {"valid": 0, "pci_domain": 4, "pci_bus": 8, "pci_slot": 9, "pci_function": 10, "pci_vendor_id": 12, "pci_device_id": 14, "gpu_id": 16, "interrupt_line": 20, "reg_address": 24, "reg_size": 32, "fb_address": 40, "fb_size": 48, "minor_number": 56, "dev_name": 60}),
    ("rt_nv_register_fd", "nv_ioctl_register_fd_t", "kernel-open/common/inc/nv-ioctl.h:127", 4,
     {"ctl_fd": 0}),
    ("rt_nv0080_alloc", "NV0080_ALLOC_PARAMETERS", "src/common/sdk/nvidia/inc/class/cl0080.h:54", 56,
     {"deviceId": 0, "hClientShare": 4, "hTargetClient": 8, "hTargetDevice": 12, "flags": 16, "vaSpaceSize": 24, "vaStartInternal": 32, "vaLimitInternal": 40, "vaMode": 48}),
    ("rt_nv2080_alloc", "NV2080_ALLOC_PARAMETERS", "src/common/sdk/nvidia/inc/class/cl2080.h:43", 4,
     {"subDeviceId": 0}),
    ("rt_nv_memory_virtual_alloc", "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS", "src/common/sdk/nvidia/inc/class/cl0070.h:66", 24,
     {"offset": 0, "limit": 8, "hVASpace": 16}),
    ("rt_nv_vaspace_alloc", "NV_VASPACE_ALLOCATION_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:3164", 56,
     {"index": 0, "flags": 4, "vaSize": 8, "vaStartInternal": 16, "vaLimitInternal": 24, "bigPageSize": 32, "vaBase": 40, "pasid": 48}),
    ("rt_nv_memory_alloc", "NV_MEMORY_ALLOCATION_PARAMS", "src/common/sdk/nvidia/inc/nvos.h:1642", 128,
     {"owner": 0, "type": 4, "flags": 8, "width": 12, "height": 16, "pitch": 20, "attr": 24, "attr2": 28, "format": 32, "comprCovg": 36, "zcullCovg": 40, "rangeLo": 48, "rangeHi": 56, "size": 64, "alignment": 72, "offset": 80, "limit": 88, "address": 96, "ctagOffset": 104, "hVASpace": 108, "internalflags": 112, "tag": 116, "numaNode": 120}),
    ("rt_nv_channel_group_alloc", "NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:2911", 20,
     {"hObjectError": 0, "hObjectEccError": 4, "hVASpace": 8, "engineType": 12, "bIsCallingContextVgpuPlugin": 16}),
    ("rt_nv_ctxshare_alloc", "NV_CTXSHARE_ALLOCATION_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:3237", 12,
     {"hVASpace": 0, "flags": 4, "subctxId": 8}),
    ("rt_nv_memory_desc", "NV_MEMORY_DESC_PARAMS", "src/common/sdk/nvidia/inc/alloc/alloc_channel.h:37", 24,
     {"base": 0, "size": 8, "addressSpace": 16, "cacheAttrib": 20}),
    ("rt_nv_channel_alloc", "NV_CHANNEL_ALLOC_PARAMS", "src/common/sdk/nvidia/inc/alloc/alloc_channel.h:296", 368,
     {"hObjectError": 0, "hObjectBuffer": 4, "gpFifoOffset": 8, "gpFifoEntries": 16, "flags": 20, "hContextShare": 24, "hVASpace": 28, "hUserdMemory": 32, "userdOffset": 64, "engineType": 128, "cid": 132, "subDeviceId": 136, "hObjectEccError": 140, "instanceMem": 144, "userdMem": 168, "ramfcMem": 192, "mthdbufMem": 216, "hPhysChannelGroup": 240, "internalFlags": 244, "errorNotifierMem": 248, "eccErrorNotifierMem": 272, "ProcessID": 296, "SubProcessID": 300, "encryptIv": 304, "decryptIv": 316, "hmacNonce": 328, "tpcConfigID": 360}),
    ("rt_nv_hopper_usermode_alloc", "NV_HOPPER_USERMODE_A_PARAMS", "src/common/sdk/nvidia/inc/nvos.h:3336", 2,
     {"bBar1Mapping": 0, "bPriv": 1}),
    ("rt_nv_notification", "NvNotification", "kernel-open/common/inc/nvgputypes.h:64", 16,
     {"timeStampLo": 0, "timeStampHi": 4, "info32": 8, "info16": 12, "status": 14}),
    ("rt_nvos55", "NVOS55_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:2273", 28,
     {"hClient": 0, "hParent": 4, "hObject": 8, "hClientSrc": 12, "hObjectSrc": 16, "flags": 20, "status": 24}),
    ("rt_nvos57", "NVOS57_PARAMETERS", "src/common/sdk/nvidia/inc/nvos.h:2306", 24,
     {"hClient": 0, "hObject": 4, "target": 8, "accessMask": 12, "type": 16, "action": 18, "status": 20}),
    ("rt_nv0000_build_version_v2_branch", "NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrl0000/ctrl0000system.h:2399", 1032,
     {"driverVersionBuffer": 0, "versionBuffer": 256, "driverBranch": 512, "titleBuffer": 768, "changelistNumber": 1024, "officialChangelistNumber": 1028}),
    ("rt_nv0000_gpu_id_info_v2", "NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrl0000/ctrl0000gpu.h:176", 32,
     {"gpuId": 0, "gpuFlags": 4, "deviceInstance": 8, "subDeviceInstance": 12, "sliStatus": 16, "boardId": 20, "gpuInstance": 24, "numaId": 28}),
    ("rt_nv0080_classlist", "NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gpu.h:74", 16,
     {"numClasses": 0, "classList": 8}),
    ("rt_nv0000_uuid_from_gpu_id", "NV0000_CTRL_GPU_GET_UUID_FROM_GPU_ID_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrl0000/ctrl0000gpu.h:660", 268,
     {"gpuId": 0, "flags": 4, "gpuUuid": 8, "uuidStrLen": 264}),
    ("rt_nv2080_gid_info", "NV2080_CTRL_GPU_GET_GID_INFO_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h:1785", 268,
     {"index": 0, "flags": 4, "length": 8, "data": 12}),
    ("rt_nva06c_schedule", "NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrla06c.h:101 (= NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS)", 3,
     {"bEnable": 0, "bSkipSubmit": 1, "bSkipEnable": 2}),
    ("rt_nva06c_timeslice", "NVA06C_CTRL_TIMESLICE_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrla06c.h:148", 8,
     {"timesliceUs": 0}),
    ("rt_nv2080_preemption_mode", "NV2080_CTRL_GR_SET_CTXSW_PREEMPTION_MODE_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gr.h:822", 32,
     {"flags": 0, "hChannel": 4, "gfxpPreemptMode": 8, "cilpPreemptMode": 12, "routeFlags": 16, "route": 24}),
    ("rt_nvc36f_work_submit_token", "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS", "src/common/sdk/nvidia/inc/ctrl/ctrlc36f.h:83", 4,
     {"workSubmitToken": 0}),
    ("rt_uvm_initialize", "UVM_INITIALIZE_PARAMS", "kernel-open/nvidia-uvm/uvm_linux_ioctl.h:38", 16,
     {"flags": 0, "rmStatus": 8}),
    ("rt_uvm_mm_initialize", "UVM_MM_INITIALIZE_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:1092", 8,
     {"uvmFd": 0, "rmStatus": 4}),
    ("rt_uvm_register_gpu", "UVM_REGISTER_GPU_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:543", 40,
     {"gpu_uuid": 0, "numaEnabled": 16, "numaNodeId": 20, "rmCtrlFd": 24, "hClient": 28, "hSmcPartRef": 32, "rmStatus": 36}),
    ("rt_uvm_unregister_gpu", "UVM_UNREGISTER_GPU_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:554", 20,
     {"gpu_uuid": 0, "rmStatus": 16}),
    ("rt_uvm_register_gpu_vaspace", "UVM_REGISTER_GPU_VASPACE_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:409", 32,
     {"gpuUuid": 0, "rmCtrlFd": 16, "hClient": 20, "hVaSpace": 24, "rmStatus": 28}),
    ("rt_uvm_unregister_gpu_vaspace", "UVM_UNREGISTER_GPU_VASPACE_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:420", 20,
     {"gpuUuid": 0, "rmStatus": 16}),
    ("rt_uvm_register_channel", "UVM_REGISTER_CHANNEL_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:436", 56,
     {"gpuUuid": 0, "rmCtrlFd": 16, "hClient": 20, "hChannel": 24, "base": 32, "length": 40, "rmStatus": 48}),
    ("rt_uvm_unregister_channel", "UVM_UNREGISTER_CHANNEL_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:449", 28,
     {"gpuUuid": 0, "hClient": 16, "hChannel": 20, "rmStatus": 24}),
    ("rt_uvm_create_external_range", "UVM_CREATE_EXTERNAL_RANGE_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:1048", 24,
     {"base": 0, "length": 8, "rmStatus": 16}),
    ("rt_uvm_gpu_mapping_attributes", "UvmGpuMappingAttributes", "kernel-open/nvidia-uvm/uvm_types.h:94", 36,
     {"gpuUuid": 0, "gpuMappingType": 16, "gpuCachingType": 20, "gpuFormatType": 24, "gpuElementBits": 28, "gpuCompressionType": 32}),
    ("rt_uvm_map_external_allocation", "UVM_MAP_EXTERNAL_ALLOCATION_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:504", 9264,
     {"base": 0, "length": 8, "offset": 16, "perGpuAttributes": 24, "gpuAttributesCount": 9240, "rmCtrlFd": 9248, "hClient": 9252, "hMemory": 9256, "rmStatus": 9260}),
    ("rt_uvm_free", "UVM_FREE_PARAMS", "kernel-open/nvidia-uvm/uvm_ioctl.h:515", 24,
     {"base": 0, "length": 8, "rmStatus": 16}),
]

# (our macro, its value, where 580.142 defines it).  Escape numbers are the ioctl nr; UVM's
# are the whole request (UVM_IOCTL_BASE(i) is i on Linux, uvm_ioctl.h:36).
NVE = "src/nvidia/arch/nvalloc/unix/include/nv_escape.h"
NVI = "kernel-open/common/inc/nv-ioctl-numbers.h"
UVM = "kernel-open/nvidia-uvm/uvm_ioctl.h"
SDK = "src/common/sdk/nvidia/inc"
CONSTANTS = [
    ("NV_ESC_RM_ALLOC_MEMORY", 0x27, f"{NVE}:27"), ("NV_ESC_RM_FREE", 0x29, f"{NVE}:29"),
    ("NV_ESC_RM_CONTROL", 0x2A, f"{NVE}:30"), ("NV_ESC_RM_ALLOC", 0x2B, f"{NVE}:31"),
    ("NV_ESC_RM_DUP_OBJECT", 0x34, f"{NVE}:34"), ("NV_ESC_RM_SHARE", 0x35, f"{NVE}:35"),
    ("NV_ESC_RM_MAP_MEMORY", 0x4E, f"{NVE}:42"), ("NV_ESC_RM_UNMAP_MEMORY", 0x4F, f"{NVE}:43"),
    ("NV_ESC_RM_MAP_MEMORY_DMA", 0x57, f"{NVE}:47"), ("NV_ESC_RM_UNMAP_MEMORY_DMA", 0x58, f"{NVE}:48"),
    ("NV_ESC_CARD_INFO", 200, f"{NVI}:31"), ("NV_ESC_REGISTER_FD", 201, f"{NVI}:32"),
    ("NV_ESC_CHECK_VERSION_STR", 210, f"{NVI}:36"), ("NV_ESC_ATTACH_GPUS_TO_FD", 212, f"{NVI}:38"),
    ("UVM_INITIALIZE", 0x30000001, "kernel-open/nvidia-uvm/uvm_linux_ioctl.h:32"),
    ("UVM_DEINITIALIZE", 0x30000002, "kernel-open/nvidia-uvm/uvm_linux_ioctl.h:40"),
    ("UVM_REGISTER_GPU_VASPACE", 25, f"{UVM}:400"), ("UVM_UNREGISTER_GPU_VASPACE", 26, f"{UVM}:414"),
    ("UVM_REGISTER_CHANNEL", 27, f"{UVM}:425"), ("UVM_UNREGISTER_CHANNEL", 28, f"{UVM}:441"),
    ("UVM_MAP_EXTERNAL_ALLOCATION", 33, f"{UVM}:491"), ("UVM_FREE", 34, f"{UVM}:509"),
    ("UVM_REGISTER_GPU", 37, f"{UVM}:532"), ("UVM_UNREGISTER_GPU", 38, f"{UVM}:548"),
    ("UVM_CREATE_EXTERNAL_RANGE", 73, f"{UVM}:1042"), ("UVM_MM_INITIALIZE", 75, f"{UVM}:1087"),
    ("NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2", 0x13E, f"{SDK}/ctrl/ctrl0000/ctrl0000system.h:2395"),
    ("NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2", 0x205, f"{SDK}/ctrl/ctrl0000/ctrl0000gpu.h:172"),
    ("NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID", 0x275, f"{SDK}/ctrl/ctrl0000/ctrl0000gpu.h:656"),
    ("NV0080_CTRL_CMD_GPU_GET_CLASSLIST", 0x800201, f"{SDK}/ctrl/ctrl0080/ctrl0080gpu.h:70"),
    ("NV2080_CTRL_CMD_GPU_GET_GID_INFO", 0x2080014A, f"{SDK}/ctrl/ctrl2080/ctrl2080gpu.h:1775"),
    ("NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE", 0x20801210, f"{SDK}/ctrl/ctrl2080/ctrl2080gr.h:818"),
    ("NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", 0xA06C0101, f"{SDK}/ctrl/ctrla06c.h:97"),
    ("NVA06C_CTRL_CMD_SET_TIMESLICE", 0xA06C0103, f"{SDK}/ctrl/ctrla06c.h:146"),
    ("NVA06C_CTRL_CMD_GET_TIMESLICE", 0xA06C0104, f"{SDK}/ctrl/ctrla06c.h:172"),
    ("NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN", 0xC36F0108, f"{SDK}/ctrl/ctrlc36f.h:79"),
    ("NV01_ROOT_CLIENT", 0x41, f"{SDK}/nvos.h:184"), ("NV01_MEMORY_SYSTEM", 0x3E, f"{SDK}/class/cl003e.h:33"),
    ("NV01_MEMORY_LOCAL_USER", 0x40, f"{SDK}/class/cl0040.h:34"), ("NV01_MEMORY_VIRTUAL", 0x70, f"{SDK}/class/cl0070.h:32"),
    ("NV50_MEMORY_VIRTUAL", 0x50A0, f"{SDK}/class/cl50a0.h:32"), ("NV01_DEVICE_0", 0x80, f"{SDK}/class/cl0080.h:36"),
    ("NV20_SUBDEVICE_0", 0x2080, f"{SDK}/class/cl2080.h:36"), ("FERMI_CONTEXT_SHARE_A", 0x9067, f"{SDK}/class/cl9067.h:33"),
    ("FERMI_VASPACE_A", 0x90F1, f"{SDK}/class/cl90f1.h:33"), ("KEPLER_CHANNEL_GROUP_A", 0xA06C, f"{SDK}/class/cla06c.h:33"),
    ("TURING_USERMODE_A", 0xC461, f"{SDK}/class/clc461.h:27"), ("HOPPER_USERMODE_A", 0xC661, f"{SDK}/class/clc661.h:26"),
    ("AMPERE_CHANNEL_GPFIFO_A", 0xC56F, f"{SDK}/class/clc56f.h:43"), ("HOPPER_CHANNEL_GPFIFO_A", 0xC86F, f"{SDK}/class/clc86f.h:27"),
    ("AMPERE_COMPUTE_A", 0xC6C0, f"{SDK}/class/clc6c0.h:32"), ("AMPERE_COMPUTE_B", 0xC7C0, f"{SDK}/class/clc7c0.h:32"),
    ("HOPPER_COMPUTE_A", 0xCBC0, f"{SDK}/class/clcbc0.h:26"), ("AMPERE_DMA_COPY_B", 0xC7B5, f"{SDK}/class/clc7b5.h:33"),
    ("HOPPER_DMA_COPY_A", 0xC8B5, f"{SDK}/class/clc8b5.h:27"),
]

# (name, value, line of src/common/sdk/nvidia/inc/nvstatuscodes.h at tag 580.142)
STATUS_CODES = [
    ("NV_OK", 0x00000000, 27),
    ("NV_ERR_GENERIC", 0x0000FFFF, 28),
    ("NV_ERR_BROKEN_FB", 0x00000001, 30),
    ("NV_ERR_BUFFER_TOO_SMALL", 0x00000002, 31),
    ("NV_ERR_BUSY_RETRY", 0x00000003, 32),
    ("NV_ERR_CALLBACK_NOT_SCHEDULED", 0x00000004, 33),
    ("NV_ERR_CARD_NOT_PRESENT", 0x00000005, 34),
    ("NV_ERR_CYCLE_DETECTED", 0x00000006, 35),
    ("NV_ERR_DMA_IN_USE", 0x00000007, 36),
    ("NV_ERR_DMA_MEM_NOT_LOCKED", 0x00000008, 37),
    ("NV_ERR_DMA_MEM_NOT_UNLOCKED", 0x00000009, 38),
    ("NV_ERR_DUAL_LINK_INUSE", 0x0000000A, 39),
    ("NV_ERR_ECC_ERROR", 0x0000000B, 40),
    ("NV_ERR_FIFO_BAD_ACCESS", 0x0000000C, 41),
    ("NV_ERR_FREQ_NOT_SUPPORTED", 0x0000000D, 42),
    ("NV_ERR_GPU_DMA_NOT_INITIALIZED", 0x0000000E, 43),
    ("NV_ERR_GPU_IS_LOST", 0x0000000F, 44),
    ("NV_ERR_GPU_IN_FULLCHIP_RESET", 0x00000010, 45),
    ("NV_ERR_GPU_NOT_FULL_POWER", 0x00000011, 46),
    ("NV_ERR_GPU_UUID_NOT_FOUND", 0x00000012, 47),
    ("NV_ERR_HOT_SWITCH", 0x00000013, 48),
    ("NV_ERR_I2C_ERROR", 0x00000014, 49),
    ("NV_ERR_I2C_SPEED_TOO_HIGH", 0x00000015, 50),
    ("NV_ERR_ILLEGAL_ACTION", 0x00000016, 51),
    ("NV_ERR_IN_USE", 0x00000017, 52),
    ("NV_ERR_INFLATE_COMPRESSED_DATA_FAILED", 0x00000018, 53),
    ("NV_ERR_INSERT_DUPLICATE_NAME", 0x00000019, 54),
    ("NV_ERR_INSUFFICIENT_RESOURCES", 0x0000001A, 55),
    ("NV_ERR_INSUFFICIENT_PERMISSIONS", 0x0000001B, 56),
    ("NV_ERR_INSUFFICIENT_POWER", 0x0000001C, 57),
    ("NV_ERR_INVALID_ACCESS_TYPE", 0x0000001D, 58),
    ("NV_ERR_INVALID_ADDRESS", 0x0000001E, 59),
    ("NV_ERR_INVALID_ARGUMENT", 0x0000001F, 60),
    ("NV_ERR_INVALID_BASE", 0x00000020, 61),
    ("NV_ERR_INVALID_CHANNEL", 0x00000021, 62),
    ("NV_ERR_INVALID_CLASS", 0x00000022, 63),
    ("NV_ERR_INVALID_CLIENT", 0x00000023, 64),
    ("NV_ERR_INVALID_COMMAND", 0x00000024, 65),
    ("NV_ERR_INVALID_DATA", 0x00000025, 66),
    ("NV_ERR_INVALID_DEVICE", 0x00000026, 67),
    ("NV_ERR_INVALID_DMA_SPECIFIER", 0x00000027, 68),
    ("NV_ERR_INVALID_EVENT", 0x00000028, 69),
    ("NV_ERR_INVALID_FLAGS", 0x00000029, 70),
    ("NV_ERR_INVALID_FUNCTION", 0x0000002A, 71),
    ("NV_ERR_INVALID_HEAP", 0x0000002B, 72),
    ("NV_ERR_INVALID_INDEX", 0x0000002C, 73),
    ("NV_ERR_INVALID_IRQ_LEVEL", 0x0000002D, 74),
    ("NV_ERR_INVALID_LIMIT", 0x0000002E, 75),
    ("NV_ERR_INVALID_LOCK_STATE", 0x0000002F, 76),
    ("NV_ERR_INVALID_METHOD", 0x00000030, 77),
    ("NV_ERR_INVALID_OBJECT", 0x00000031, 78),
    ("NV_ERR_INVALID_OBJECT_BUFFER", 0x00000032, 79),
    ("NV_ERR_INVALID_OBJECT_HANDLE", 0x00000033, 80),
    ("NV_ERR_INVALID_OBJECT_NEW", 0x00000034, 81),
    ("NV_ERR_INVALID_OBJECT_OLD", 0x00000035, 82),
    ("NV_ERR_INVALID_OBJECT_PARENT", 0x00000036, 83),
    ("NV_ERR_INVALID_OFFSET", 0x00000037, 84),
    ("NV_ERR_INVALID_OPERATION", 0x00000038, 85),
    ("NV_ERR_INVALID_OWNER", 0x00000039, 86),
    ("NV_ERR_INVALID_PARAM_STRUCT", 0x0000003A, 87),
    ("NV_ERR_INVALID_PARAMETER", 0x0000003B, 88),
    ("NV_ERR_INVALID_PATH", 0x0000003C, 89),
    ("NV_ERR_INVALID_POINTER", 0x0000003D, 90),
    ("NV_ERR_INVALID_REGISTRY_KEY", 0x0000003E, 91),
    ("NV_ERR_INVALID_REQUEST", 0x0000003F, 92),
    ("NV_ERR_INVALID_STATE", 0x00000040, 93),
    ("NV_ERR_INVALID_STRING_LENGTH", 0x00000041, 94),
    ("NV_ERR_INVALID_READ", 0x00000042, 95),
    ("NV_ERR_INVALID_WRITE", 0x00000043, 96),
    ("NV_ERR_INVALID_XLATE", 0x00000044, 97),
    ("NV_ERR_IRQ_NOT_FIRING", 0x00000045, 98),
    ("NV_ERR_IRQ_EDGE_TRIGGERED", 0x00000046, 99),
    ("NV_ERR_MEMORY_TRAINING_FAILED", 0x00000047, 100),
    ("NV_ERR_MISMATCHED_SLAVE", 0x00000048, 101),
    ("NV_ERR_MISMATCHED_TARGET", 0x00000049, 102),
    ("NV_ERR_MISSING_TABLE_ENTRY", 0x0000004A, 103),
    ("NV_ERR_MODULE_LOAD_FAILED", 0x0000004B, 104),
    ("NV_ERR_MORE_DATA_AVAILABLE", 0x0000004C, 105),
    ("NV_ERR_MORE_PROCESSING_REQUIRED", 0x0000004D, 106),
    ("NV_ERR_MULTIPLE_MEMORY_TYPES", 0x0000004E, 107),
    ("NV_ERR_NO_FREE_FIFOS", 0x0000004F, 108),
    ("NV_ERR_NO_INTR_PENDING", 0x00000050, 109),
    ("NV_ERR_NO_MEMORY", 0x00000051, 110),
    ("NV_ERR_NO_SUCH_DOMAIN", 0x00000052, 111),
    ("NV_ERR_NO_VALID_PATH", 0x00000053, 112),
    ("NV_ERR_NOT_COMPATIBLE", 0x00000054, 113),
    ("NV_ERR_NOT_READY", 0x00000055, 114),
    ("NV_ERR_NOT_SUPPORTED", 0x00000056, 115),
    ("NV_ERR_OBJECT_NOT_FOUND", 0x00000057, 116),
    ("NV_ERR_OBJECT_TYPE_MISMATCH", 0x00000058, 117),
    ("NV_ERR_OPERATING_SYSTEM", 0x00000059, 118),
    ("NV_ERR_OTHER_DEVICE_FOUND", 0x0000005A, 119),
    ("NV_ERR_OUT_OF_RANGE", 0x0000005B, 120),
    ("NV_ERR_OVERLAPPING_UVM_COMMIT", 0x0000005C, 121),
    ("NV_ERR_PAGE_TABLE_NOT_AVAIL", 0x0000005D, 122),
    ("NV_ERR_PID_NOT_FOUND", 0x0000005E, 123),
    ("NV_ERR_PROTECTION_FAULT", 0x0000005F, 124),
    ("NV_ERR_RC_ERROR", 0x00000060, 125),
    ("NV_ERR_REJECTED_VBIOS", 0x00000061, 126),
    ("NV_ERR_RESET_REQUIRED", 0x00000062, 127),
    ("NV_ERR_STATE_IN_USE", 0x00000063, 128),
    ("NV_ERR_SIGNAL_PENDING", 0x00000064, 129),
    ("NV_ERR_TIMEOUT", 0x00000065, 130),
    ("NV_ERR_TIMEOUT_RETRY", 0x00000066, 131),
    ("NV_ERR_TOO_MANY_PRIMARIES", 0x00000067, 132),
    ("NV_ERR_UVM_ADDRESS_IN_USE", 0x00000068, 133),
    ("NV_ERR_MAX_SESSION_LIMIT_REACHED", 0x00000069, 134),
    ("NV_ERR_LIB_RM_VERSION_MISMATCH", 0x0000006A, 135),
    ("NV_ERR_PRIV_SEC_VIOLATION", 0x0000006B, 136),
    ("NV_ERR_GPU_IN_DEBUG_MODE", 0x0000006C, 137),
    ("NV_ERR_FEATURE_NOT_ENABLED", 0x0000006D, 138),
    ("NV_ERR_RESOURCE_LOST", 0x0000006E, 139),
    ("NV_ERR_PMU_NOT_READY", 0x0000006F, 140),
    ("NV_ERR_FLCN_ERROR", 0x00000070, 141),
    ("NV_ERR_FATAL_ERROR", 0x00000071, 142),
    ("NV_ERR_MEMORY_ERROR", 0x00000072, 143),
    ("NV_ERR_INVALID_LICENSE", 0x00000073, 144),
    ("NV_ERR_NVLINK_INIT_ERROR", 0x00000074, 145),
    ("NV_ERR_NVLINK_MINION_ERROR", 0x00000075, 146),
    ("NV_ERR_NVLINK_CLOCK_ERROR", 0x00000076, 147),
    ("NV_ERR_NVLINK_TRAINING_ERROR", 0x00000077, 148),
    ("NV_ERR_NVLINK_CONFIGURATION_ERROR", 0x00000078, 149),
    ("NV_ERR_RISCV_ERROR", 0x00000079, 150),
    ("NV_ERR_FABRIC_MANAGER_NOT_PRESENT", 0x0000007A, 151),
    ("NV_ERR_ALREADY_SIGNALLED", 0x0000007B, 152),
    ("NV_ERR_QUEUE_TASK_SLOT_NOT_AVAILABLE", 0x0000007C, 153),
    ("NV_ERR_KEY_ROTATION_IN_PROGRESS", 0x0000007D, 154),
    ("NV_ERR_TEST_ONLY_CODE_NOT_ENABLED", 0x0000007E, 155),
    ("NV_ERR_SECURE_BOOT_FAILED", 0x0000007F, 156),
    ("NV_ERR_INSUFFICIENT_ZBC_ENTRY", 0x00000080, 157),
    ("NV_ERR_NVLINK_FABRIC_NOT_READY", 0x00000081, 158),
    ("NV_ERR_NVLINK_FABRIC_FAILURE", 0x00000082, 159),
    ("NV_ERR_GPU_MEMORY_ONLINING_FAILURE", 0x00000083, 160),
    ("NV_ERR_REDUCTION_MANAGER_NOT_AVAILABLE", 0x00000084, 161),
    ("NV_ERR_THRESHOLD_CROSSED", 0x00000085, 162),
    ("NV_ERR_RESOURCE_RETIREMENT_ERROR", 0x00000086, 163),
    ("NV_ERR_FABRIC_STATE_OUT_OF_SYNC", 0x00000087, 164),
    ("NV_ERR_BUFFER_FULL", 0x00000088, 165),
    ("NV_ERR_BUFFER_EMPTY", 0x00000089, 166),
    ("NV_ERR_MC_FLA_OFFSET_TABLE_FULL", 0x0000008A, 167),
    ("NV_ERR_DMA_XFER_FAILED", 0x0000008B, 168),
    ("NV_WARN_HOT_SWITCH", 0x00010001, 171),
    ("NV_WARN_INCORRECT_PERFMON_DATA", 0x00010002, 172),
    ("NV_WARN_MISMATCHED_SLAVE", 0x00010003, 173),
    ("NV_WARN_MISMATCHED_TARGET", 0x00010004, 174),
    ("NV_WARN_MORE_PROCESSING_REQUIRED", 0x00010005, 175),
    ("NV_WARN_NOTHING_TO_DO", 0x00010006, 176),
    ("NV_WARN_NULL_OBJECT", 0x00010007, 177),
    ("NV_WARN_OUT_OF_RANGE", 0x00010008, 178),
    ("NV_WARN_THRESHOLD_CROSSED", 0x00010009, 179),
]

def run_c(tmp_path: Path, body: str, *sources: str) -> str:
    program = tmp_path / "probe.c"
    program.write_text('#include <stdio.h>\n#include <stddef.h>\n#include "nv_rm.h"\n#include "nv_ctrl.h"\n'
                       '#include "nv_uvm.h"\n#include "nv_classes.h"\n#include "nv_status.h"\n'
                       f"int main(void)\n{{\n{body}\n    return 0;\n}}\n", encoding="utf-8")
    exe = tmp_path / "probe"
    build = subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-D_DEFAULT_SOURCE", f"-I{RUNTIME}", str(program),
                            *(str(RUNTIME / s) for s in sources), "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def test_struct_layouts_are_the_public_headers(tmp_path):
    lines = []
    for ours, _, _, _, fields in LAYOUTS:
        lines.append(f'    printf("{ours} sizeof %zu\\n", sizeof({ours}));')
        lines += [f'    printf("{ours}.{f} %zu\\n", offsetof({ours}, {f}));' for f in fields]
    got = dict(line.rsplit(" ", 1) for line in run_c(tmp_path, "\n".join(lines)).splitlines())
    wrong = []
    for ours, theirs, where, size, fields in LAYOUTS:
        if int(got[f"{ours} sizeof"]) != size:
            wrong.append(f"sizeof({ours}) is {got[f'{ours} sizeof']}, {theirs} ({where}) is {size}")
        wrong += [f"{ours}.{f} is at {got[f'{ours}.{f}']}, {theirs}'s at {off} ({where})"
                  for f, off in fields.items() if int(got[f"{ours}.{f}"]) != off]
    assert not wrong, "\n".join(wrong)


def test_constants_are_the_public_headers(tmp_path):
    body = "\n".join(f'    printf("{n} %llu\\n", (unsigned long long)({n}));' for n, _, _ in CONSTANTS)
    got = dict(line.split() for line in run_c(tmp_path, body).splitlines())
    wrong = [f"{n} is {int(got[n]):#x}, {where} has {v:#x}" for n, v, where in CONSTANTS if int(got[n]) != v]
    assert not wrong, "\n".join(wrong)


def test_every_status_code_prints_its_name_and_number(tmp_path):
    """nv_status_name knows every code of the branch's nvstatuscodes.h, and says the number in hex
    and decimal; a number outside the list still comes out in hex and decimal."""
    unknown = 0x00ABCDEF
    assert unknown not in {v for _, v, _ in STATUS_CODES}
    body = "\n".join(f'    puts(nv_status_name(0x{v:x}u));' for _, v, _ in STATUS_CODES)
    body += f'\n    puts(nv_status_name(0x{unknown:x}u));'
    got = run_c(tmp_path, body, "nv_status.c").splitlines()
    want = [f"{n} ({v:#x} = {v})" for n, v, _ in STATUS_CODES]
    wrong = [f"{w!r} came out as {g!r}" for w, g in zip(want, got) if w != g]
    assert not wrong, f"{len(wrong)} of {len(want)} codes:\n" + "\n".join(wrong)
    assert f"{unknown:#x}" in got[-1] and str(unknown) in got[-1], got[-1]
