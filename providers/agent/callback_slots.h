// One enable callback per slot. PENABLECALLBACK's context is the provider's own, so a caller
// that must find state of its own per registration gives each registration a different
// function: slot N's calls Handler(N, ...) and the handler looks its state up by slot.
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <array>
#include <utility>

namespace etwh::agent {

using SlotHandler = void (*)(int slot, LPCGUID source_id, ULONG is_enabled, UCHAR level,
                             ULONGLONG match_any, ULONGLONG match_all,
                             PEVENT_FILTER_DESCRIPTOR filter, PVOID context);

template <SlotHandler Handler, int Slot>
VOID NTAPI slot_callback(LPCGUID source_id, ULONG is_enabled, UCHAR level, ULONGLONG match_any,
                         ULONGLONG match_all, PEVENT_FILTER_DESCRIPTOR filter, PVOID context) {
  Handler(Slot, source_id, is_enabled, level, match_any, match_all, filter, context);
}

template <SlotHandler Handler, int... Slots>
constexpr std::array<PENABLECALLBACK, sizeof...(Slots)> slot_callbacks(
    std::integer_sequence<int, Slots...>) {
  return {&slot_callback<Handler, Slots>...};
}

// The table of `Count` callbacks, index = slot.
template <SlotHandler Handler, int Count>
constexpr auto make_slot_callbacks() {
  return slot_callbacks<Handler>(std::make_integer_sequence<int, Count>{});
}

}  // namespace etwh::agent
