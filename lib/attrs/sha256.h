/*
 * sha256: SHA-256 (FIPS 180-4) of a buffer or a file, as lowercase hex;
 * the identity of a language model's files (sha256sum(1) prints the same).
 */
#ifndef KG_SHA256_H
#define KG_SHA256_H

#include <stddef.h>

/* The digest of p[0..n) into hex[0..65) (64 digits and a NUL). */
void kg_sha256_hex(const void *p, size_t n, char hex[65]);

/* The digest of the file at path; 0, or -1 after kg_error(). */
int kg_sha256_file(const char *path, char hex[65]);

#endif
