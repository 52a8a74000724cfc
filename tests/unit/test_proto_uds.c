/* UDS decoding (src/proto/uds.c): every negative response code by name, response pending,
 * services and sub-functions, ReadDataByIdentifier's DID and data, ReadDTCInformation's
 * DTC records, and the UDS / OBD-II split. */
#include <string.h>
#include "check.h"
#include "streamfat/diag.h"

static void nrc_names(void)
{
    /* ISO 14229-1:2020 annex A.1, every code it names */
    static const struct { uint8_t c; const char *n; } want[] = {
        {0x10, "generalReject"}, {0x11, "serviceNotSupported"},
        {0x12, "subFunctionNotSupported"}, {0x13, "incorrectMessageLengthOrInvalidFormat"},
        {0x14, "responseTooLong"}, {0x21, "busyRepeatRequest"},
        {0x22, "conditionsNotCorrect"}, {0x24, "requestSequenceError"},
        {0x25, "noResponseFromSubnetComponent"},
        {0x26, "failurePreventsExecutionOfRequestedAction"}, {0x31, "requestOutOfRange"},
        {0x33, "securityAccessDenied"}, {0x34, "authenticationRequired"},
        {0x35, "invalidKey"}, {0x36, "exceedNumberOfAttempts"},
        {0x37, "requiredTimeDelayNotExpired"}, {0x38, "secureDataTransmissionRequired"},
        {0x39, "secureDataTransmissionNotAllowed"}, {0x3A, "secureDataVerificationFailed"},
        {0x50, "certificateVerificationFailedInvalidTimePeriod"},
        {0x51, "certificateVerificationFailedInvalidSignature"},
        {0x52, "certificateVerificationFailedInvalidChainOfTrust"},
        {0x53, "certificateVerificationFailedInvalidType"},
        {0x54, "certificateVerificationFailedInvalidFormat"},
        {0x55, "certificateVerificationFailedInvalidContent"},
        {0x56, "certificateVerificationFailedInvalidScope"},
        {0x57, "certificateVerificationFailedInvalidCertificate"},
        {0x58, "ownershipVerificationFailed"}, {0x59, "challengeCalculationFailed"},
        {0x5A, "settingAccessRightsFailed"}, {0x5B, "sessionKeyCreationDerivationFailed"},
        {0x5C, "configurationDataUsageFailed"}, {0x5D, "deAuthenticationFailed"},
        {0x70, "uploadDownloadNotAccepted"}, {0x71, "transferDataSuspended"},
        {0x72, "generalProgrammingFailure"}, {0x73, "wrongBlockSequenceCounter"},
        {0x78, "requestCorrectlyReceivedResponsePending"},
        {0x7E, "subFunctionNotSupportedInActiveSession"},
        {0x7F, "serviceNotSupportedInActiveSession"}, {0x81, "rpmTooHigh"},
        {0x82, "rpmTooLow"}, {0x83, "engineIsRunning"}, {0x84, "engineIsNotRunning"},
        {0x85, "engineRunTimeTooLow"}, {0x86, "temperatureTooHigh"},
        {0x87, "temperatureTooLow"}, {0x88, "vehicleSpeedTooHigh"},
        {0x89, "vehicleSpeedTooLow"}, {0x8A, "throttlePedalTooHigh"},
        {0x8B, "throttlePedalTooLow"}, {0x8C, "transmissionRangeNotInNeutral"},
        {0x8D, "transmissionRangeNotInGear"}, {0x8F, "brakeSwitchNotClosed"},
        {0x90, "shifterLeverNotInPark"}, {0x91, "torqueConverterClutchLocked"},
        {0x92, "voltageTooHigh"}, {0x93, "voltageTooLow"},
        {0x94, "resourceTemporarilyNotAvailable"},
    };
    int named = 0;
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *n = sf_uds_nrc_name(want[i].c);
        REQUIRE(n != NULL);
        CHECK(strcmp(n, want[i].n) == 0);
    }
    for (unsigned c = 0; c < 256; c++)
        named += sf_uds_nrc_name((uint8_t)c) != NULL;
    CHECK_EQ(named, (int)(sizeof want / sizeof want[0]));   /* no code named by us alone */
    CHECK(sf_uds_nrc_name(0x00) == NULL);
    CHECK(sf_uds_nrc_name(0x8E) == NULL);
    CHECK(sf_uds_nrc_name(0xFF) == NULL);
}

static void negative(void)
{
    struct sf_uds u;
    static const uint8_t pend[] = {0x7F, 0x22, 0x78};
    REQUIRE(sf_uds_parse(pend, 3, &u) == 0);
    CHECK_EQ(u.kind, SF_UDS_NEGATIVE);
    CHECK_EQ(u.sid, 0x22);
    CHECK_EQ(u.nrc, SF_UDS_NRC_PENDING);
    CHECK(strcmp(sf_uds_service_name(u.sid), "ReadDataByIdentifier") == 0);
    static const uint8_t oor[] = {0x7F, 0x19, 0x31};
    REQUIRE(sf_uds_parse(oor, 3, &u) == 0);
    CHECK_EQ(u.nrc, 0x31);
    CHECK(sf_uds_parse(oor, 2, &u) == -1);      /* cut short */
    CHECK(sf_uds_parse(oor, 0, &u) == -1);
}

static void rdbi(void)
{
    struct sf_uds u;
    static const uint8_t req[] = {0x22, 0xF1, 0x90};
    REQUIRE(sf_uds_parse(req, 3, &u) == 0);
    CHECK_EQ(u.kind, SF_UDS_REQUEST);
    CHECK(u.has_did && u.did == 0xF190 && u.len == 0);
    static const uint8_t rsp[] = {0x62, 0xF1, 0x90, 'W', 'D', 'B', '1'};
    REQUIRE(sf_uds_parse(rsp, sizeof rsp, &u) == 0);
    CHECK_EQ(u.kind, SF_UDS_POSITIVE);
    CHECK_EQ(u.sid, 0x22);
    CHECK(u.has_did && u.did == 0xF190);
    CHECK(!u.has_sub);
    CHECK(u.len == 4 && memcmp(u.data, "WDB1", 4) == 0);
    static const uint8_t wr[] = {0x6E, 0x01, 0x23};
    REQUIRE(sf_uds_parse(wr, 3, &u) == 0);
    CHECK(u.sid == 0x2E && u.has_did && u.did == 0x0123);
}

static void sub_functions(void)
{
    struct sf_uds u;
    static const uint8_t tp[] = {0x3E, 0x80};     /* TesterPresent, no answer wanted */
    REQUIRE(sf_uds_parse(tp, 2, &u) == 0);
    CHECK(u.has_sub && u.sub == 0 && u.suppress);
    static const uint8_t dsc[] = {0x50, 0x03, 0x00, 0x32, 0x01, 0xF4};
    REQUIRE(sf_uds_parse(dsc, sizeof dsc, &u) == 0);
    CHECK(u.kind == SF_UDS_POSITIVE && u.sid == 0x10 && u.sub == 3 && !u.suppress);
    CHECK_EQ(u.len, 4u);
    CHECK(strcmp(sf_uds_service_name(0x10), "DiagnosticSessionControl") == 0);
    static const uint8_t ata[] = {0xC3, 0x01};    /* AccessTimingParameter's answer */
    REQUIRE(sf_uds_parse(ata, 2, &u) == 0);
    CHECK(u.kind == SF_UDS_POSITIVE && u.sid == 0x83);
    CHECK(sf_uds_service_name(0x01) == NULL);
}

static void dtcs(void)
{
    struct sf_uds u;
    uint32_t dtc;
    uint8_t st;
    static const uint8_t rsp[] = {0x59, 0x02, 0xFF, 0x12, 0x34, 0x56, 0x2F,
                                  0xC1, 0x00, 0x87, 0x09, 0x00};   /* a cut record */
    REQUIRE(sf_uds_parse(rsp, sizeof rsp, &u) == 0);
    CHECK(u.sid == 0x19 && u.sub == 0x02 && u.dtc_list && u.avail_mask == 0xFF);
    REQUIRE(sf_uds_dtc_at(&u, 0, &dtc, &st) == 1);
    CHECK(dtc == 0x123456 && st == 0x2F);
    REQUIRE(sf_uds_dtc_at(&u, 1, &dtc, &st) == 1);
    CHECK(dtc == 0xC10087 && st == 0x09);
    CHECK(sf_uds_dtc_at(&u, 2, &dtc, &st) == 0);
    static const uint8_t none[] = {0x59, 0x02, 0x7F};
    REQUIRE(sf_uds_parse(none, 3, &u) == 0);
    CHECK(u.dtc_list && sf_uds_dtc_at(&u, 0, &dtc, &st) == 0);
    static const uint8_t cnt[] = {0x59, 0x01, 0xFF, 0x01, 0x00, 0x02};  /* a count */
    REQUIRE(sf_uds_parse(cnt, sizeof cnt, &u) == 0);
    CHECK(!u.dtc_list && sf_uds_dtc_at(&u, 0, &dtc, &st) == 0);
    static const uint8_t req[] = {0x19, 0x02, 0x08};
    REQUIRE(sf_uds_parse(req, 3, &u) == 0);
    CHECK(u.kind == SF_UDS_REQUEST && !u.dtc_list && u.len == 1);
}

static void split(void)
{
    static const uint8_t a[] = {0x62}, b[] = {0x41, 0x0C}, c[] = {0x7F, 0x01, 0x12},
                         d[] = {0x7F, 0x22, 0x31}, e[] = {0x09, 0x02}, g[] = {0x22};
    CHECK(sf_uds_is_uds(a, 1));
    CHECK(!sf_uds_is_uds(b, 2));
    CHECK(!sf_uds_is_uds(c, 3));
    CHECK(sf_uds_is_uds(d, 3));
    CHECK(!sf_uds_is_uds(e, 2));
    CHECK(sf_uds_is_uds(g, 1));
    CHECK(!sf_uds_is_uds(g, 0));
}

int main(void)
{
    nrc_names();
    negative();
    rdbi();
    sub_functions();
    dtcs();
    split();
    TEST_END();
}
