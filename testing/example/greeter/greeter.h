// Example.Greeter: a TraceLogging provider, the code under test of greeter_test.cc.
#pragma once

#include <string>

void greeter_register();
void greeter_unregister();
// Writes "Greeting" (level 4, keyword 0x1) with fields Name and Count, and "GreetingDetail"
// (level 5, keyword 0x2) with Name.
void greet(const std::string& name, unsigned count);
