#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhook.h"
#include "core/util.h"

void
kg_test_after_checkpoint(void)
{
	static uint64_t count;
	const char *v = getenv("KG_TEST_KILL_AFTER_CKPT");
	char num[32];
	const char *colon;
	uint64_t n;
	size_t len;
	int ok, sig = SIGKILL;

	count++;
	if (v == NULL)
		return;
	colon = strchr(v, ':');
	len = colon ? (size_t)(colon - v) : strlen(v);
	if (len == 0 || len >= sizeof(num))
		return;
	memcpy(num, v, len);
	num[len] = '\0';
	if (colon != NULL) {
		if (strcmp(colon + 1, "TERM") == 0)
			sig = SIGTERM;
		else if (strcmp(colon + 1, "INT") == 0)
			sig = SIGINT;
		else if (strcmp(colon + 1, "KILL") != 0)
			return;
	}
	kg_error_mute(1);
	ok = kg_parse_u64("KG_TEST_KILL_AFTER_CKPT", num, 1, UINT64_MAX,
	    &n) == 0;
	kg_error_mute(0);
	if (ok && n == count)
		raise(sig);
}
