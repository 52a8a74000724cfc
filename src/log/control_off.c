/* Built instead of control.c when the control stage is left out (SF_NO_LOG_CONTROL, CMake
 * -DSF_LOG_CONTROL=OFF; see include/streamfat/config.h): sf_log_control refuses with
 * SF_ENOTSUP, so lg->ctl stays NULL and the logger never reaches the stage. */
#include "log_impl.h"

int sf_log_control(struct sf_log *lg, const struct sf_ctl_cfg *c, void *mem, uint32_t mem_size)
{
    (void)lg, (void)c, (void)mem, (void)mem_size;
    return SF_ENOTSUP;
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
