// Example-Inventory: a manifest-based provider (inventory.man), the code under test of
// inventory_test.cc.
#pragma once

#include <string>

void inventory_register();
void inventory_unregister();
// Writes ItemAdded (ID 1, level 4, keyword Stock), and ItemLow (ID 2, level 3) when the stock
// falls under 5; every change is audited (ID 3, level 5, keyword Audit).
void add_item(const std::string& sku, unsigned quantity);
