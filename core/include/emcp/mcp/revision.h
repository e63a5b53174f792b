// emcp/mcp/revision.h - the MCP revisions emcp speaks and what each of them has: one table.
//
// Every place that writes or accepts something only some revisions know asks
// supports(version, Feature::k...) instead of comparing versions itself. A feature is
// described by the first and the last revision that has it (kFeatureSpans); the question is
// constexpr, so with a constant feature it compiles to the same one or two comparisons a
// hand-written check would, and a firmware image pays nothing for the table (always inlined;
// the table itself is never in flash).
//
// To add a revision: add it to Version (newest last) and kVersionNames (emcp/mcp/types.h and
// core/src/mcp/revision.cpp), then give each feature it drops an end and each feature it brings
// a row.
//
// Context: pure data; any context.
#ifndef EMCP_MCP_REVISION_H
#define EMCP_MCP_REVISION_H

#include <stdint.h>

#include "emcp/mcp/types.h"

EMCP_NS_BEGIN
namespace mcp {

/// What differs between revisions, as the server sees it.
enum class Feature : uint8_t {
  kBatches,                ///< JSON-RPC batches (2025-03-26 only)
  kAudioContent,           ///< audio content blocks
  kToolAnnotations,        ///< tool annotations (readOnlyHint...)
  kProgressMessage,        ///< notifications/progress carries `message`
  kCompletionsCapability,  ///< the `completions` capability
  kTitles,                 ///< `title` on the server, tools, resources, templates, prompts
  kStructuredContent,      ///< outputSchema and structuredContent
  kResourceLinks,          ///< resource_link content blocks
  kElicitation,            ///< elicitation/create (form mode)
  kLastModified,           ///< annotations.lastModified
  kCompletionContext,      ///< completion/complete's context.arguments
  kIcons,                  ///< icons on the server, tools, resources, templates, prompts
  kServerDescription,      ///< serverInfo.description and websiteUrl
  kElicitationUrl,         ///< elicitation in URL mode
  kMultiSelectEnums,       ///< array-of-enum elicitation properties
  kOmitUnknownId,          ///< an error to an unreadable id leaves `id` out instead of null
  kSsePolling,             ///< SSE priming events with ids, streams the server ends (SEP-1699)
  kSessions,               ///< the legacy era: initialize, sessions, ping, logging/setLevel,
                           ///< resources/subscribe, requests to the client
  kModern,              ///< the modern era: `_meta` on every request, server/discover,
                           ///< resultType, caching hints, -32602 for an unknown resource
  kTasks,                  ///< the experimental tasks (capability tasks, params.task,
                           ///< tasks/get|result|list|cancel); 2026-07-28 has an extension instead
  kCount
};

/// The first and the last revision a feature is part of (kStill: still part of the newest).
struct FeatureSpan {
  Version since;
  Version until;
};
constexpr Version kStill = static_cast<Version>(0xFF);

/// Indexed by Feature.
constexpr FeatureSpan kFeatureSpans[] = {
    {Version::k2025_03_26, Version::k2025_03_26},  // kBatches
    {Version::k2025_03_26, kStill},        // kAudioContent
    {Version::k2025_03_26, kStill},        // kToolAnnotations
    {Version::k2025_03_26, kStill},        // kProgressMessage
    {Version::k2025_03_26, kStill},        // kCompletionsCapability
    {Version::k2025_06_18, kStill},        // kTitles
    {Version::k2025_06_18, kStill},        // kStructuredContent
    {Version::k2025_06_18, kStill},        // kResourceLinks
    {Version::k2025_06_18, kStill},        // kElicitation
    {Version::k2025_06_18, kStill},        // kLastModified
    {Version::k2025_06_18, kStill},        // kCompletionContext
    {Version::k2025_11_25, kStill},        // kIcons
    {Version::k2025_11_25, kStill},        // kServerDescription
    {Version::k2025_11_25, kStill},        // kElicitationUrl
    {Version::k2025_11_25, kStill},        // kMultiSelectEnums
    {Version::k2025_11_25, kStill},        // kOmitUnknownId
    {Version::k2025_11_25, Version::k2025_11_25},  // kSsePolling
    {Version::k2024_11_05, Version::k2025_11_25},  // kSessions
    {Version::k2026_07_28, kStill},        // kModern
    {Version::k2025_11_25, Version::k2025_11_25},  // kTasks
};
static_assert(sizeof kFeatureSpans / sizeof kFeatureSpans[0] == static_cast<size_t>(Feature::kCount),
              "one row per feature");

/// True when revision `v` has feature `f`. Always inlined: with a constant `f` it folds to the
/// comparisons themselves (-Os would otherwise call one out-of-line copy with the table).
__attribute__((always_inline)) constexpr inline bool supports(Version v, Feature f) {
  return v >= kFeatureSpans[static_cast<uint8_t>(f)].since &&
         (kFeatureSpans[static_cast<uint8_t>(f)].until == kStill || v <= kFeatureSpans[static_cast<uint8_t>(f)].until);
}

/// How many revisions Version has (its values are 0 to kVersionCount - 1, the newest last).
constexpr uint8_t kVersionCount = static_cast<uint8_t>(Version::k2026_07_28) + 1;

/// True when this build serves revision `v`: the legacy era's (kSessions) with EMCP_LEGACY_ERA,
/// the modern era's (kModern) with EMCP_MODERN_ERA (what a device announces: board/mdns.h).
constexpr bool served(Version v) {
  return (EMCP_LEGACY_ERA && supports(v, Feature::kSessions)) || (EMCP_MODERN_ERA && supports(v, Feature::kModern));
}

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_REVISION_H
