/* NV_STATUS codes, every one the driver branch we speak (580) defines.
 *
 * Values: open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvstatuscodes.h
 * (tag 580.142: 150 codes, a superset of 580.65.06's 149), written here as our own
 * table, ordered by value.  All of them, not only the ones we expect: RM and UVM
 * calls pass up statuses from deep inside the driver, and a message should name
 * whichever one came.  tests/host/test_nv_public_headers.py holds the list with
 * its source lines.  Cross-checks from the facts:
 * NV_ERR_INVALID_PARAM_STRUCT is 0x3A (58, "rm_control error 58"),
 * NV_ERR_NOT_SUPPORTED 0x56.
 */
#ifndef RT_NV_STATUS_H
#define RT_NV_STATUS_H

#include <stdint.h>

typedef uint32_t NvStatus;

#define NV_OK                                        0x00000000u
#define NV_ERR_BROKEN_FB                             0x00000001u
#define NV_ERR_BUFFER_TOO_SMALL                      0x00000002u
#define NV_ERR_BUSY_RETRY                            0x00000003u
#define NV_ERR_CALLBACK_NOT_SCHEDULED                0x00000004u
#define NV_ERR_CARD_NOT_PRESENT                      0x00000005u
#define NV_ERR_CYCLE_DETECTED                        0x00000006u
#define NV_ERR_DMA_IN_USE                            0x00000007u
#define NV_ERR_DMA_MEM_NOT_LOCKED                    0x00000008u
#define NV_ERR_DMA_MEM_NOT_UNLOCKED                  0x00000009u
#define NV_ERR_DUAL_LINK_INUSE                       0x0000000Au
#define NV_ERR_ECC_ERROR                             0x0000000Bu
#define NV_ERR_FIFO_BAD_ACCESS                       0x0000000Cu
#define NV_ERR_FREQ_NOT_SUPPORTED                    0x0000000Du
#define NV_ERR_GPU_DMA_NOT_INITIALIZED               0x0000000Eu
#define NV_ERR_GPU_IS_LOST                           0x0000000Fu
#define NV_ERR_GPU_IN_FULLCHIP_RESET                 0x00000010u
#define NV_ERR_GPU_NOT_FULL_POWER                    0x00000011u
#define NV_ERR_GPU_UUID_NOT_FOUND                    0x00000012u
#define NV_ERR_HOT_SWITCH                            0x00000013u
#define NV_ERR_I2C_ERROR                             0x00000014u
#define NV_ERR_I2C_SPEED_TOO_HIGH                    0x00000015u
#define NV_ERR_ILLEGAL_ACTION                        0x00000016u
#define NV_ERR_IN_USE                                0x00000017u
#define NV_ERR_INFLATE_COMPRESSED_DATA_FAILED        0x00000018u
#define NV_ERR_INSERT_DUPLICATE_NAME                 0x00000019u
#define NV_ERR_INSUFFICIENT_RESOURCES                0x0000001Au
#define NV_ERR_INSUFFICIENT_PERMISSIONS              0x0000001Bu
#define NV_ERR_INSUFFICIENT_POWER                    0x0000001Cu
#define NV_ERR_INVALID_ACCESS_TYPE                   0x0000001Du
#define NV_ERR_INVALID_ADDRESS                       0x0000001Eu
#define NV_ERR_INVALID_ARGUMENT                      0x0000001Fu
#define NV_ERR_INVALID_BASE                          0x00000020u
#define NV_ERR_INVALID_CHANNEL                       0x00000021u
#define NV_ERR_INVALID_CLASS                         0x00000022u
#define NV_ERR_INVALID_CLIENT                        0x00000023u
#define NV_ERR_INVALID_COMMAND                       0x00000024u
#define NV_ERR_INVALID_DATA                          0x00000025u
#define NV_ERR_INVALID_DEVICE                        0x00000026u
#define NV_ERR_INVALID_DMA_SPECIFIER                 0x00000027u
#define NV_ERR_INVALID_EVENT                         0x00000028u
#define NV_ERR_INVALID_FLAGS                         0x00000029u
#define NV_ERR_INVALID_FUNCTION                      0x0000002Au
#define NV_ERR_INVALID_HEAP                          0x0000002Bu
#define NV_ERR_INVALID_INDEX                         0x0000002Cu
#define NV_ERR_INVALID_IRQ_LEVEL                     0x0000002Du
#define NV_ERR_INVALID_LIMIT                         0x0000002Eu
#define NV_ERR_INVALID_LOCK_STATE                    0x0000002Fu
#define NV_ERR_INVALID_METHOD                        0x00000030u
#define NV_ERR_INVALID_OBJECT                        0x00000031u
#define NV_ERR_INVALID_OBJECT_BUFFER                 0x00000032u
#define NV_ERR_INVALID_OBJECT_HANDLE                 0x00000033u
#define NV_ERR_INVALID_OBJECT_NEW                    0x00000034u
#define NV_ERR_INVALID_OBJECT_OLD                    0x00000035u
#define NV_ERR_INVALID_OBJECT_PARENT                 0x00000036u
#define NV_ERR_INVALID_OFFSET                        0x00000037u
#define NV_ERR_INVALID_OPERATION                     0x00000038u
#define NV_ERR_INVALID_OWNER                         0x00000039u
#define NV_ERR_INVALID_PARAM_STRUCT                  0x0000003Au
#define NV_ERR_INVALID_PARAMETER                     0x0000003Bu
#define NV_ERR_INVALID_PATH                          0x0000003Cu
#define NV_ERR_INVALID_POINTER                       0x0000003Du
#define NV_ERR_INVALID_REGISTRY_KEY                  0x0000003Eu
#define NV_ERR_INVALID_REQUEST                       0x0000003Fu
#define NV_ERR_INVALID_STATE                         0x00000040u
#define NV_ERR_INVALID_STRING_LENGTH                 0x00000041u
#define NV_ERR_INVALID_READ                          0x00000042u
#define NV_ERR_INVALID_WRITE                         0x00000043u
#define NV_ERR_INVALID_XLATE                         0x00000044u
#define NV_ERR_IRQ_NOT_FIRING                        0x00000045u
#define NV_ERR_IRQ_EDGE_TRIGGERED                    0x00000046u
#define NV_ERR_MEMORY_TRAINING_FAILED                0x00000047u
#define NV_ERR_MISMATCHED_SLAVE                      0x00000048u
#define NV_ERR_MISMATCHED_TARGET                     0x00000049u
#define NV_ERR_MISSING_TABLE_ENTRY                   0x0000004Au
#define NV_ERR_MODULE_LOAD_FAILED                    0x0000004Bu
#define NV_ERR_MORE_DATA_AVAILABLE                   0x0000004Cu
#define NV_ERR_MORE_PROCESSING_REQUIRED              0x0000004Du
#define NV_ERR_MULTIPLE_MEMORY_TYPES                 0x0000004Eu
#define NV_ERR_NO_FREE_FIFOS                         0x0000004Fu
#define NV_ERR_NO_INTR_PENDING                       0x00000050u
#define NV_ERR_NO_MEMORY                             0x00000051u
#define NV_ERR_NO_SUCH_DOMAIN                        0x00000052u
#define NV_ERR_NO_VALID_PATH                         0x00000053u
#define NV_ERR_NOT_COMPATIBLE                        0x00000054u
#define NV_ERR_NOT_READY                             0x00000055u
#define NV_ERR_NOT_SUPPORTED                         0x00000056u
#define NV_ERR_OBJECT_NOT_FOUND                      0x00000057u
#define NV_ERR_OBJECT_TYPE_MISMATCH                  0x00000058u
#define NV_ERR_OPERATING_SYSTEM                      0x00000059u
#define NV_ERR_OTHER_DEVICE_FOUND                    0x0000005Au
#define NV_ERR_OUT_OF_RANGE                          0x0000005Bu
#define NV_ERR_OVERLAPPING_UVM_COMMIT                0x0000005Cu
#define NV_ERR_PAGE_TABLE_NOT_AVAIL                  0x0000005Du
#define NV_ERR_PID_NOT_FOUND                         0x0000005Eu
#define NV_ERR_PROTECTION_FAULT                      0x0000005Fu
#define NV_ERR_RC_ERROR                              0x00000060u
#define NV_ERR_REJECTED_VBIOS                        0x00000061u
#define NV_ERR_RESET_REQUIRED                        0x00000062u
#define NV_ERR_STATE_IN_USE                          0x00000063u
#define NV_ERR_SIGNAL_PENDING                        0x00000064u
#define NV_ERR_TIMEOUT                               0x00000065u
#define NV_ERR_TIMEOUT_RETRY                         0x00000066u
#define NV_ERR_TOO_MANY_PRIMARIES                    0x00000067u
#define NV_ERR_UVM_ADDRESS_IN_USE                    0x00000068u
#define NV_ERR_MAX_SESSION_LIMIT_REACHED             0x00000069u
#define NV_ERR_LIB_RM_VERSION_MISMATCH               0x0000006Au
#define NV_ERR_PRIV_SEC_VIOLATION                    0x0000006Bu
#define NV_ERR_GPU_IN_DEBUG_MODE                     0x0000006Cu
#define NV_ERR_FEATURE_NOT_ENABLED                   0x0000006Du
#define NV_ERR_RESOURCE_LOST                         0x0000006Eu
#define NV_ERR_PMU_NOT_READY                         0x0000006Fu
#define NV_ERR_FLCN_ERROR                            0x00000070u
#define NV_ERR_FATAL_ERROR                           0x00000071u
#define NV_ERR_MEMORY_ERROR                          0x00000072u
#define NV_ERR_INVALID_LICENSE                       0x00000073u
#define NV_ERR_NVLINK_INIT_ERROR                     0x00000074u
#define NV_ERR_NVLINK_MINION_ERROR                   0x00000075u
#define NV_ERR_NVLINK_CLOCK_ERROR                    0x00000076u
#define NV_ERR_NVLINK_TRAINING_ERROR                 0x00000077u
#define NV_ERR_NVLINK_CONFIGURATION_ERROR            0x00000078u
#define NV_ERR_RISCV_ERROR                           0x00000079u
#define NV_ERR_FABRIC_MANAGER_NOT_PRESENT            0x0000007Au
#define NV_ERR_ALREADY_SIGNALLED                     0x0000007Bu
#define NV_ERR_QUEUE_TASK_SLOT_NOT_AVAILABLE         0x0000007Cu
#define NV_ERR_KEY_ROTATION_IN_PROGRESS              0x0000007Du
#define NV_ERR_TEST_ONLY_CODE_NOT_ENABLED            0x0000007Eu
#define NV_ERR_SECURE_BOOT_FAILED                    0x0000007Fu
#define NV_ERR_INSUFFICIENT_ZBC_ENTRY                0x00000080u
#define NV_ERR_NVLINK_FABRIC_NOT_READY               0x00000081u
#define NV_ERR_NVLINK_FABRIC_FAILURE                 0x00000082u
#define NV_ERR_GPU_MEMORY_ONLINING_FAILURE           0x00000083u
#define NV_ERR_REDUCTION_MANAGER_NOT_AVAILABLE       0x00000084u
#define NV_ERR_THRESHOLD_CROSSED                     0x00000085u
#define NV_ERR_RESOURCE_RETIREMENT_ERROR             0x00000086u
#define NV_ERR_FABRIC_STATE_OUT_OF_SYNC              0x00000087u
#define NV_ERR_BUFFER_FULL                           0x00000088u
#define NV_ERR_BUFFER_EMPTY                          0x00000089u
#define NV_ERR_MC_FLA_OFFSET_TABLE_FULL              0x0000008Au
#define NV_ERR_DMA_XFER_FAILED                       0x0000008Bu
#define NV_ERR_GENERIC                               0x0000FFFFu
#define NV_WARN_HOT_SWITCH                           0x00010001u
#define NV_WARN_INCORRECT_PERFMON_DATA               0x00010002u
#define NV_WARN_MISMATCHED_SLAVE                     0x00010003u
#define NV_WARN_MISMATCHED_TARGET                    0x00010004u
#define NV_WARN_MORE_PROCESSING_REQUIRED             0x00010005u
#define NV_WARN_NOTHING_TO_DO                        0x00010006u
#define NV_WARN_NULL_OBJECT                          0x00010007u
#define NV_WARN_OUT_OF_RANGE                         0x00010008u
#define NV_WARN_THRESHOLD_CROSSED                    0x00010009u

/* "NV_ERR_INVALID_ARGUMENT (0x1f = 31)": the name with the number in hex and in
 * decimal (users and tools quote either); "NV_STATUS 0x... = ... (no code of
 * driver branch 580)" for a number the table lacks.  The text lives in a per-thread
 * buffer that the next call overwrites: use it once per message. */
const char *nv_status_name(NvStatus status);

#endif
