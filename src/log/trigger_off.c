/* Built instead of trigger.c when the flight recorder is left out (SF_NO_LOG_TRIGGER, CMake
 * -DSF_LOG_TRIGGER=OFF; see include/streamfat/config.h). sf_log_open refuses a
 * configuration that asks for it (pre_bytes, pre_ns or post_ns) with SF_ENOTSUP, so the
 * writer never reaches the two hooks below with the recorder on. */
#include "log_impl.h"

int sfl_fr_service(struct sf_log *lg, uint64_t now)
{
    (void)lg, (void)now;
    return 0;
}

void sfl_fr_release_all(struct sf_log *lg)
{
    (void)lg;
}

int sf_log_trigger(struct sf_log *lg, uint64_t ts, const char *why)
{
    (void)lg, (void)ts, (void)why;
    return SF_ENOTSUP;
}
