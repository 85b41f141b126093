// etwrt: how the library reaches its broker: finds the executable, starts it detached, and
// connects to it through the verified home, refusing what is not this user's broker.
#pragma once

#include <string>

namespace etwrt {

// Starts a detached broker for `home` (double fork + setsid, so it is nobody's zombie and
// survives us), its output to broker.log in the verified home `dir_fd`. False when it cannot.
bool spawn_broker(const std::string& home, int dir_fd);

// Connects to the broker of the verified home `dir_fd`: -1 when nobody listens. Sets `refused`
// (and `error`) instead when what is there is not this user's broker: a planted link or file,
// or a listener of another user (SO_PEERCRED); nothing is sent to it and no broker started.
int connect_to(int dir_fd, const std::string& home, std::string& error, bool& refused);

}  // namespace etwrt
