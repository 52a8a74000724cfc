/* UDS (ISO 14229-1) messages: the service, positive or negative response, sub-function,
 * data identifier, and the DTC records of ReadDTCInformation (include/streamfat/diag.h).
 * Names are the standard's (2020 edition), as identifiers. */
#include "streamfat/diag.h"

struct uds_name {
    uint8_t id;
    const char *name;
};

/* ISO 14229-1:2020 table 23 (services) */
static const struct uds_name services[] = {
    {0x10, "DiagnosticSessionControl"}, {0x11, "ECUReset"},
    {0x14, "ClearDiagnosticInformation"}, {0x19, "ReadDTCInformation"},
    {0x22, "ReadDataByIdentifier"}, {0x23, "ReadMemoryByAddress"},
    {0x24, "ReadScalingDataByIdentifier"}, {0x27, "SecurityAccess"},
    {0x28, "CommunicationControl"}, {0x29, "Authentication"},
    {0x2A, "ReadDataByPeriodicIdentifier"}, {0x2C, "DynamicallyDefineDataIdentifier"},
    {0x2E, "WriteDataByIdentifier"}, {0x2F, "InputOutputControlByIdentifier"},
    {0x31, "RoutineControl"}, {0x34, "RequestDownload"}, {0x35, "RequestUpload"},
    {0x36, "TransferData"}, {0x37, "RequestTransferExit"}, {0x38, "RequestFileTransfer"},
    {0x3D, "WriteMemoryByAddress"}, {0x3E, "TesterPresent"},
    {0x83, "AccessTimingParameter"}, {0x84, "SecuredDataTransmission"},
    {0x85, "ControlDTCSetting"}, {0x86, "ResponseOnEvent"}, {0x87, "LinkControl"},
};

/* ISO 14229-1:2020 annex A.1 (negative response codes) */
static const struct uds_name nrcs[] = {
    {0x10, "generalReject"},
    {0x11, "serviceNotSupported"},
    {0x12, "subFunctionNotSupported"},
    {0x13, "incorrectMessageLengthOrInvalidFormat"},
    {0x14, "responseTooLong"},
    {0x21, "busyRepeatRequest"},
    {0x22, "conditionsNotCorrect"},
    {0x24, "requestSequenceError"},
    {0x25, "noResponseFromSubnetComponent"},
    {0x26, "failurePreventsExecutionOfRequestedAction"},
    {0x31, "requestOutOfRange"},
    {0x33, "securityAccessDenied"},
    {0x34, "authenticationRequired"},
    {0x35, "invalidKey"},
    {0x36, "exceedNumberOfAttempts"},
    {0x37, "requiredTimeDelayNotExpired"},
    {0x38, "secureDataTransmissionRequired"},
    {0x39, "secureDataTransmissionNotAllowed"},
    {0x3A, "secureDataVerificationFailed"},
    {0x50, "certificateVerificationFailedInvalidTimePeriod"},
    {0x51, "certificateVerificationFailedInvalidSignature"},
    {0x52, "certificateVerificationFailedInvalidChainOfTrust"},
    {0x53, "certificateVerificationFailedInvalidType"},
    {0x54, "certificateVerificationFailedInvalidFormat"},
    {0x55, "certificateVerificationFailedInvalidContent"},
    {0x56, "certificateVerificationFailedInvalidScope"},
    {0x57, "certificateVerificationFailedInvalidCertificate"},
    {0x58, "ownershipVerificationFailed"},
    {0x59, "challengeCalculationFailed"},
    {0x5A, "settingAccessRightsFailed"},
    {0x5B, "sessionKeyCreationDerivationFailed"},
    {0x5C, "configurationDataUsageFailed"},
    {0x5D, "deAuthenticationFailed"},
    {0x70, "uploadDownloadNotAccepted"},
    {0x71, "transferDataSuspended"},
    {0x72, "generalProgrammingFailure"},
    {0x73, "wrongBlockSequenceCounter"},
    {0x78, "requestCorrectlyReceivedResponsePending"},
    {0x7E, "subFunctionNotSupportedInActiveSession"},
    {0x7F, "serviceNotSupportedInActiveSession"},
    {0x81, "rpmTooHigh"},
    {0x82, "rpmTooLow"},
    {0x83, "engineIsRunning"},
    {0x84, "engineIsNotRunning"},
    {0x85, "engineRunTimeTooLow"},
    {0x86, "temperatureTooHigh"},
    {0x87, "temperatureTooLow"},
    {0x88, "vehicleSpeedTooHigh"},
    {0x89, "vehicleSpeedTooLow"},
    {0x8A, "throttlePedalTooHigh"},
    {0x8B, "throttlePedalTooLow"},
    {0x8C, "transmissionRangeNotInNeutral"},
    {0x8D, "transmissionRangeNotInGear"},
    {0x8F, "brakeSwitchNotClosed"},
    {0x90, "shifterLeverNotInPark"},
    {0x91, "torqueConverterClutchLocked"},
    {0x92, "voltageTooHigh"},
    {0x93, "voltageTooLow"},
    {0x94, "resourceTemporarilyNotAvailable"},
};

static const char *find(const struct uds_name *t, uint32_t n, uint8_t id)
{
    for (uint32_t i = 0; i < n; i++)
        if (t[i].id == id)
            return t[i].name;
    return 0;
}

const char *sf_uds_service_name(uint8_t sid)
{
    return find(services, sizeof services / sizeof services[0], sid);
}

const char *sf_uds_nrc_name(uint8_t nrc)
{
    return find(nrcs, sizeof nrcs / sizeof nrcs[0], nrc);
}

static int is_request_sid(uint8_t b)
{
    return (b >= 0x10 && b <= 0x3E) || (b >= 0x83 && b <= 0x87);
}

int sf_uds_is_uds(const uint8_t *msg, uint32_t n)
{
    if (n == 0)
        return 0;
    uint8_t b = msg[0];
    if (b == 0x7F)
        return n >= 2 && is_request_sid(msg[1]);
    return is_request_sid(b) || ((b & 0x40) && is_request_sid(b & (uint8_t)~0x40));
}

/* Services whose first byte after the SID is a sub-function (ISO 14229-1 service
 * definitions; the responses echo it). */
static int has_subfunction(uint8_t sid)
{
    switch (sid) {
    case 0x10: case 0x11: case 0x19: case 0x27: case 0x28: case 0x29: case 0x2C:
    case 0x31: case 0x3E: case 0x83: case 0x85: case 0x86: case 0x87:
        return 1;
    default:
        return 0;
    }
}

/* ReadDTCInformation sub-functions whose answer is DTCStatusAvailabilityMask followed by
 * DTCAndStatusRecords (DTC 3 bytes, status 1): reportDTCByStatusMask (0x02),
 * reportSupportedDTC (0x0A), reportFirstTestFailedDTC .. reportMostRecentConfirmedDTC
 * (0x0B-0x0E), reportMirrorMemoryDTCByStatusMask (0x0F), reportEmissionsOBDDTCByStatusMask
 * (0x13), reportDTCWithPermanentStatus (0x15). */
static int is_dtc_list(uint8_t sub)
{
    return sub == 0x02 || (sub >= 0x0A && sub <= 0x0F) || sub == 0x13 || sub == 0x15;
}

int sf_uds_parse(const uint8_t *msg, uint32_t n, struct sf_uds *u)
{
    *u = (struct sf_uds){0};
    if (n == 0)
        return -1;
    uint32_t pos = 1;
    uint8_t b = msg[0];
    if (b == 0x7F) {
        if (n < 3)
            return -1;
        u->kind = SF_UDS_NEGATIVE;
        u->sid = msg[1];
        u->nrc = msg[2];
        u->data = msg + 3;
        u->len = n - 3;
        return 0;
    }
    if ((b & 0x40) && !is_request_sid(b)) {
        u->kind = SF_UDS_POSITIVE;
        u->sid = b & (uint8_t)~0x40;
    } else {
        u->kind = SF_UDS_REQUEST;
        u->sid = b;
    }
    if (has_subfunction(u->sid) && pos < n) {
        u->has_sub = 1;
        u->sub = msg[pos] & 0x7F;
        u->suppress = u->kind == SF_UDS_REQUEST && (msg[pos] & 0x80);
        pos++;
    }
    if ((u->sid == 0x22 || u->sid == 0x2E || u->sid == 0x2F) && pos + 2 <= n) {
        u->has_did = 1;
        u->did = (uint16_t)(msg[pos] << 8 | msg[pos + 1]);
        pos += 2;
    }
    if (u->kind == SF_UDS_POSITIVE && u->sid == 0x19 && u->has_sub && is_dtc_list(u->sub) &&
        pos < n) {
        u->dtc_list = 1;
        u->avail_mask = msg[pos++];
    }
    u->data = msg + pos;
    u->len = n - pos;
    return 0;
}

int sf_uds_dtc_at(const struct sf_uds *u, uint32_t i, uint32_t *dtc, uint8_t *status)
{
    if (!u->dtc_list || i >= u->len / 4)
        return 0;
    const uint8_t *r = u->data + 4 * i;
    *dtc = (uint32_t)r[0] << 16 | (uint32_t)r[1] << 8 | r[2];
    *status = r[3];
    return 1;
}
