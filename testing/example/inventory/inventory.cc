// Example-Inventory in the shape mc.exe generates for inventory.man: descriptors as constants,
// one write function per template (EventDataDescCreate per field), registration through
// EventRegister with a callback that keeps whether any session enabled the provider, and
// EventEnabled before each write.
#include "inventory.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <atomic>

namespace {

// {7C1F4D2A-5E3B-4A69-8D0C-1B2A3C4D5E6F}, the manifest's provider guid.
const GUID kInventoryId = {
    0x7c1f4d2a, 0x5e3b, 0x4a69, {0x8d, 0x0c, 0x1b, 0x2a, 0x3c, 0x4d, 0x5e, 0x6f}};
// Id, Version, Channel, Level, Opcode, Task, Keyword, as in the manifest.
const EVENT_DESCRIPTOR kItemAdded = {1, 0, 0, TRACE_LEVEL_INFORMATION, 0, 0, 0x1};
const EVENT_DESCRIPTOR kItemLow = {2, 0, 0, TRACE_LEVEL_WARNING, 0, 0, 0x1};
const EVENT_DESCRIPTOR kItemAudited = {3, 0, 0, TRACE_LEVEL_VERBOSE, 0, 0, 0x2};

REGHANDLE g_handle = 0;
std::atomic<bool> g_enabled{false};

void WINAPI on_enable(LPCGUID, ULONG code, UCHAR, ULONGLONG, ULONGLONG, PEVENT_FILTER_DESCRIPTOR,
                      PVOID) {
  if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) g_enabled = true;
  if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) g_enabled = false;
}

// The template "Item": Sku (AnsiString, with its NUL), Quantity (UInt32).
void write_item(const EVENT_DESCRIPTOR& d, const std::string& sku, unsigned quantity) {
  if (!g_enabled || !EventEnabled(g_handle, &d)) return;
  EVENT_DATA_DESCRIPTOR data[2];
  EventDataDescCreate(&data[0], sku.c_str(), static_cast<ULONG>(sku.size() + 1));
  EventDataDescCreate(&data[1], &quantity, sizeof quantity);
  EventWrite(g_handle, &d, 2, data);
}

}  // namespace

void inventory_register() { EventRegister(&kInventoryId, &on_enable, nullptr, &g_handle); }

void inventory_unregister() {
  EventUnregister(g_handle);
  g_handle = 0;
  g_enabled = false;
}

void add_item(const std::string& sku, unsigned quantity) {
  write_item(kItemAdded, sku, quantity);
  if (quantity < 5) write_item(kItemLow, sku, quantity);
  write_item(kItemAudited, sku, quantity);
}
