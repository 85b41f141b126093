// Rule IDs the harness's code blames findings on, one named constant each (catalog/rules.json
// holds the rules themselves). Code names a rule only through these; rules_test.cc checks that
// every one exists in the catalog, and `etwh run` refuses a catalog that lacks one.
#pragma once

#include <array>
#include <string_view>

namespace etwh::rules {

inline constexpr char kCbAllAnd[] = "CB-ALL-AND";
inline constexpr char kCbAnyOr[] = "CB-ANY-OR";
inline constexpr char kCbCaptureState[] = "CB-CAPTURE-STATE";
inline constexpr char kCbContext[] = "CB-CONTEXT";
inline constexpr char kCbDisableLast[] = "CB-DISABLE-LAST";
inline constexpr char kCbEnabledStays[] = "CB-ENABLED-STAYS";
inline constexpr char kCbFast[] = "CB-FAST";
inline constexpr char kCbFilterCopy[] = "CB-FILTER-COPY";
inline constexpr char kCbFilterPerSession[] = "CB-FILTER-PER-SESSION";
inline constexpr char kCbLevelMax[] = "CB-LEVEL-MAX";
inline constexpr char kCbRecompute[] = "CB-RECOMPUTE";
inline constexpr char kCbSourceid[] = "CB-SOURCEID";
inline constexpr char kCbSourceidNullLegacy[] = "CB-SOURCEID-NULL-LEGACY";
inline constexpr char kCbSourceidNullPreenabled[] = "CB-SOURCEID-NULL-PREENABLED";
inline constexpr char kCbTimeout[] = "CB-TIMEOUT";
inline constexpr char kCbUnknownCode[] = "CB-UNKNOWN-CODE";

inline constexpr char kConClock[] = "CON-CLOCK";
inline constexpr char kConHeaderEvent[] = "CON-HEADER-EVENT";
inline constexpr char kConLogfileCopy[] = "CON-LOGFILE-COPY";
inline constexpr char kConOpenBeforeStart[] = "CON-OPEN-BEFORE-START";
inline constexpr char kConOrder[] = "CON-ORDER";
inline constexpr char kConRecordMode[] = "CON-RECORD-MODE";
inline constexpr char kConRtBuffered[] = "CON-RT-BUFFERED";
inline constexpr char kConRtSecond[] = "CON-RT-SECOND";
inline constexpr char kConSlow[] = "CON-SLOW";
inline constexpr char kConUserContext[] = "CON-USER-CONTEXT";
inline constexpr char kConWpp[] = "CON-WPP";

inline constexpr char kDescChannel[] = "DESC-CHANNEL";
inline constexpr char kDescIdVersion[] = "DESC-ID-VERSION";
inline constexpr char kDescKeywordNonzero[] = "DESC-KEYWORD-NONZERO";
inline constexpr char kDescLevelNonzero[] = "DESC-LEVEL-NONZERO";
inline constexpr char kDescMofOpcode[] = "DESC-MOF-OPCODE";
inline constexpr char kDescOpcode[] = "DESC-OPCODE";
inline constexpr char kDescTlId0[] = "DESC-TL-ID0";

inline constexpr char kEtlAccounting[] = "ETL-ACCOUNTING";
inline constexpr char kEtlAppend[] = "ETL-APPEND";
inline constexpr char kEtlCircularLost[] = "ETL-CIRCULAR-LOST";
inline constexpr char kEtlCircularNewest[] = "ETL-CIRCULAR-NEWEST";
inline constexpr char kEtlClock[] = "ETL-CLOCK";
inline constexpr char kEtlHeaderFields[] = "ETL-HEADER-FIELDS";
inline constexpr char kEtlHeaderFirst[] = "ETL-HEADER-FIRST";
inline constexpr char kEtlMaxFileSize[] = "ETL-MAX-FILE-SIZE";
inline constexpr char kEtlNewfile[] = "ETL-NEWFILE";
inline constexpr char kEtlOrder[] = "ETL-ORDER";

inline constexpr char kFltAnyZero[] = "FLT-ANY-ZERO";
inline constexpr char kFltIgnoreKeyword0[] = "FLT-IGNORE-KEYWORD0";
inline constexpr char kFltKeyword[] = "FLT-KEYWORD";
inline constexpr char kFltKeyword0Bypass[] = "FLT-KEYWORD0-BYPASS";
inline constexpr char kFltLevel[] = "FLT-LEVEL";
inline constexpr char kFltPerSession[] = "FLT-PER-SESSION";
inline constexpr char kFltReplace[] = "FLT-REPLACE";

inline constexpr char kGrpDisallow[] = "GRP-DISALLOW";
inline constexpr char kGrpEnable[] = "GRP-ENABLE";
inline constexpr char kGrpNoIdFilters[] = "GRP-NO-ID-FILTERS";
inline constexpr char kGrpNoPrivate[] = "GRP-NO-PRIVATE";

inline constexpr char kHdrClassRollup[] = "HDR-CLASS-ROLLUP";
inline constexpr char kHdrClassicLevel[] = "HDR-CLASSIC-LEVEL";
inline constexpr char kHdrFlags[] = "HDR-FLAGS";
inline constexpr char kHdrSize[] = "HDR-SIZE";
inline constexpr char kHdrTypes[] = "HDR-TYPES";

inline constexpr char kLasterrClassic[] = "LASTERR-CLASSIC";
inline constexpr char kLasterrOpentrace[] = "LASTERR-OPENTRACE";

inline constexpr char kProvCaptureState[] = "PROV-CAPTURE-STATE";
inline constexpr char kProvEventEnabled[] = "PROV-EVENT-ENABLED";
inline constexpr char kProvRecord[] = "PROV-RECORD";

inline constexpr char kRtWriteDisabled[] = "RT-WRITE-DISABLED";

inline constexpr char kSesClassicOne[] = "SES-CLASSIC-ONE";
inline constexpr char kSesMax8[] = "SES-MAX-8";
inline constexpr char kSesPersist[] = "SES-PERSIST";

inline constexpr char kTlMetaEventName[] = "TL-META-EVENT-NAME";
inline constexpr char kTlMetaFormat[] = "TL-META-FORMAT";
inline constexpr char kTlMetaInType[] = "TL-META-INTYPE";
inline constexpr char kTlProviderMetadata[] = "TL-PROVIDER-METADATA";
inline constexpr char kTlSchemaItem[] = "TL-SCHEMA-ITEM";
inline constexpr char kTlTimestampOverride[] = "TL-TIMESTAMP-OVERRIDE";
inline constexpr char kTlTypeIgnored[] = "TL-TYPE-IGNORED";

inline constexpr char kTrFormat[] = "TR-FORMAT";
inline constexpr char kTrInEvents[] = "TR-IN-EVENTS";
inline constexpr char kTrSetOnce[] = "TR-SET-ONCE";
inline constexpr char kTrSize256[] = "TR-SIZE-256";
inline constexpr char kTrTypeReserved[] = "TR-TYPE-RESERVED";

// Every constant above, for the catalog checks (rules_test.cc: none is left out).
inline constexpr auto kAll = std::to_array<std::string_view>({kCbAllAnd,
                                                              kCbAnyOr,
                                                              kCbCaptureState,
                                                              kCbContext,
                                                              kCbDisableLast,
                                                              kCbEnabledStays,
                                                              kCbFast,
                                                              kCbFilterCopy,
                                                              kCbFilterPerSession,
                                                              kCbLevelMax,
                                                              kCbRecompute,
                                                              kCbSourceid,
                                                              kCbSourceidNullLegacy,
                                                              kCbSourceidNullPreenabled,
                                                              kCbTimeout,
                                                              kCbUnknownCode,
                                                              kConClock,
                                                              kConHeaderEvent,
                                                              kConLogfileCopy,
                                                              kConOpenBeforeStart,
                                                              kConOrder,
                                                              kConRecordMode,
                                                              kConRtBuffered,
                                                              kConRtSecond,
                                                              kConSlow,
                                                              kConUserContext,
                                                              kConWpp,
                                                              kDescChannel,
                                                              kDescIdVersion,
                                                              kDescKeywordNonzero,
                                                              kDescLevelNonzero,
                                                              kDescMofOpcode,
                                                              kDescOpcode,
                                                              kDescTlId0,
                                                              kEtlAccounting,
                                                              kEtlAppend,
                                                              kEtlCircularLost,
                                                              kEtlCircularNewest,
                                                              kEtlClock,
                                                              kEtlHeaderFields,
                                                              kEtlHeaderFirst,
                                                              kEtlMaxFileSize,
                                                              kEtlNewfile,
                                                              kEtlOrder,
                                                              kFltAnyZero,
                                                              kFltIgnoreKeyword0,
                                                              kFltKeyword,
                                                              kFltKeyword0Bypass,
                                                              kFltLevel,
                                                              kFltPerSession,
                                                              kFltReplace,
                                                              kGrpDisallow,
                                                              kGrpEnable,
                                                              kGrpNoIdFilters,
                                                              kGrpNoPrivate,
                                                              kHdrClassRollup,
                                                              kHdrClassicLevel,
                                                              kHdrFlags,
                                                              kHdrSize,
                                                              kHdrTypes,
                                                              kLasterrClassic,
                                                              kLasterrOpentrace,
                                                              kProvCaptureState,
                                                              kProvEventEnabled,
                                                              kProvRecord,
                                                              kRtWriteDisabled,
                                                              kSesClassicOne,
                                                              kSesMax8,
                                                              kSesPersist,
                                                              kTlMetaEventName,
                                                              kTlMetaFormat,
                                                              kTlMetaInType,
                                                              kTlProviderMetadata,
                                                              kTlSchemaItem,
                                                              kTlTimestampOverride,
                                                              kTlTypeIgnored,
                                                              kTrFormat,
                                                              kTrInEvents,
                                                              kTrSetOnce,
                                                              kTrSize256,
                                                              kTrTypeReserved});

}  // namespace etwh::rules
