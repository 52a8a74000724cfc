/* Built instead of control.c when the control stage is left out (SF_NO_LOG_CONTROL, CMake
 * -DSF_LOG_CONTROL=OFF; see include/streamfat/config.h). sf_log_open refuses a cfg.control
 * with SF_ENOTSUP, so lg->ctl stays NULL and the producer and writer never reach the hooks
 * below. */
#include "log_impl.h"

int sfl_ctl_open(struct sf_log *lg)
{
    (void)lg;
    return SF_ENOTSUP;
}

int sfl_ctl_append_can(struct sf_log *lg, uint8_t channel, uint64_t ts, uint32_t id,
                       uint32_t flags, const uint8_t *data, uint8_t len)
{
    (void)lg, (void)channel, (void)ts, (void)id, (void)flags, (void)data, (void)len;
    return SF_EINVAL;                   /* never reached: lg->ctl is always NULL */
}

int sfl_ctl_service(struct sf_log *lg, uint64_t now)
{
    (void)lg, (void)now;
    return 0;
}

void sfl_ctl_stats(const struct sf_log *lg, struct sf_log_stats *st)
{
    (void)lg, (void)st;
}

int sf_log_control_check(const struct sf_ctl_cfg *c, uint32_t *index)
{
    (void)c;
    if (index)
        *index = 0;
    return SF_CTL_OK;
}

const char *sf_log_control_why(int bad)
{
    (void)bad;
    return "the control stage is not built in (SF_NO_LOG_CONTROL)";
}

uint32_t sf_log_control_mem_size(const struct sf_ctl_cfg *c)
{
    (void)c;
    return 0;
}

int sf_log_get_chan_stats(const struct sf_log *lg, uint32_t channel,
                          struct sf_log_chan_stats *cs)
{
    (void)lg, (void)channel, (void)cs;
    return SF_ENOTSUP;
}

int sf_ctl_signal_raw(const struct sf_ctl_signal *s, const uint8_t *data, uint8_t len,
                      int64_t *raw)
{
    (void)s, (void)data, (void)len, (void)raw;
    return SF_ENOTSUP;
}
