/* SHA-256 (FIPS 180-4): a token stream's digest (docs/formats.md, "Token stream"),
 * checked by a request before the GPU is touched (native_request.c). */
#ifndef RT_SHA256_H
#define RT_SHA256_H

#include <stddef.h>
#include <stdint.h>

void rt_sha256(const void *data, size_t size, uint8_t digest[32]);

#endif
