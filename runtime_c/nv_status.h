/* NV_STATUS codes the shim names in its messages.
 *
 * Values: open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvstatuscodes.h
 * (the list is numbered in order; written here from it, only the codes a
 * user-space client meets).  Cross-checks from the facts: NV_ERR_INVALID_PARAM_STRUCT
 * is 0x3A (58, "rm_control error 58"), NV_ERR_NOT_SUPPORTED 0x56.
 */
#ifndef RT_NV_STATUS_H
#define RT_NV_STATUS_H

#include <stdint.h>

typedef uint32_t NvStatus;

#define NV_OK                                0x00000000u
#define NV_ERR_BUFFER_TOO_SMALL              0x00000002u
#define NV_ERR_BUSY_RETRY                    0x00000003u
#define NV_ERR_CARD_NOT_PRESENT              0x00000005u
#define NV_ERR_DMA_IN_USE                    0x00000007u
#define NV_ERR_ECC_ERROR                     0x0000000Bu
#define NV_ERR_GPU_IS_LOST                   0x0000000Fu
#define NV_ERR_GPU_UUID_NOT_FOUND            0x00000012u
#define NV_ERR_ILLEGAL_ACTION                0x00000016u
#define NV_ERR_IN_USE                        0x00000017u
#define NV_ERR_INSUFFICIENT_RESOURCES        0x0000001Au
#define NV_ERR_INSUFFICIENT_PERMISSIONS      0x0000001Bu
#define NV_ERR_INVALID_ACCESS_TYPE           0x0000001Du
#define NV_ERR_INVALID_ADDRESS               0x0000001Eu
#define NV_ERR_INVALID_ARGUMENT              0x0000001Fu
#define NV_ERR_INVALID_BASE                  0x00000020u
#define NV_ERR_INVALID_CHANNEL               0x00000021u
#define NV_ERR_INVALID_CLASS                 0x00000022u
#define NV_ERR_INVALID_CLIENT                0x00000023u
#define NV_ERR_INVALID_COMMAND               0x00000024u
#define NV_ERR_INVALID_DATA                  0x00000025u
#define NV_ERR_INVALID_DEVICE                0x00000026u
#define NV_ERR_INVALID_FLAGS                 0x00000029u
#define NV_ERR_INVALID_INDEX                 0x0000002Cu
#define NV_ERR_INVALID_LIMIT                 0x0000002Eu
#define NV_ERR_INVALID_METHOD                0x00000030u
#define NV_ERR_INVALID_OBJECT                0x00000031u
#define NV_ERR_INVALID_OBJECT_BUFFER         0x00000032u
#define NV_ERR_INVALID_OBJECT_HANDLE         0x00000033u
#define NV_ERR_INVALID_OBJECT_NEW            0x00000034u
#define NV_ERR_INVALID_OBJECT_OLD            0x00000035u
#define NV_ERR_INVALID_OBJECT_PARENT         0x00000036u
#define NV_ERR_INVALID_OFFSET                0x00000037u
#define NV_ERR_INVALID_OPERATION             0x00000038u
#define NV_ERR_INVALID_OWNER                 0x00000039u
#define NV_ERR_INVALID_PARAM_STRUCT          0x0000003Au
#define NV_ERR_INVALID_PARAMETER             0x0000003Bu
#define NV_ERR_INVALID_POINTER               0x0000003Du
#define NV_ERR_INVALID_REQUEST               0x0000003Fu
#define NV_ERR_INVALID_STATE                 0x00000040u
#define NV_ERR_MISSING_TABLE_ENTRY           0x0000004Au
#define NV_ERR_NO_MEMORY                     0x00000051u
#define NV_ERR_NO_SUCH_DOMAIN                0x00000052u
#define NV_ERR_NOT_COMPATIBLE                0x00000054u
#define NV_ERR_NOT_READY                     0x00000055u
#define NV_ERR_NOT_SUPPORTED                 0x00000056u
#define NV_ERR_OBJECT_NOT_FOUND              0x00000057u
#define NV_ERR_OBJECT_TYPE_MISMATCH          0x00000058u
#define NV_ERR_OPERATING_SYSTEM              0x00000059u
#define NV_ERR_OUT_OF_RANGE                  0x0000005Bu
#define NV_ERR_PROTECTION_FAULT              0x0000005Fu
#define NV_ERR_RC_ERROR                      0x00000060u
#define NV_ERR_RESET_REQUIRED                0x00000062u
#define NV_ERR_STATE_IN_USE                  0x00000063u
#define NV_ERR_TIMEOUT                       0x00000065u
#define NV_ERR_UVM_ADDRESS_IN_USE            0x00000068u
#define NV_ERR_GENERIC                       0x0000FFFFu

/* "NV_ERR_INVALID_ARGUMENT" for 0x1f; "NV_STATUS 0x..." when the code is not
 * in the table (a static buffer: not thread safe, fine for error paths). */
const char *nv_status_name(NvStatus status);

#endif
