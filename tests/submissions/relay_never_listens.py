# relay_never_listens: starts, prints that it is "starting", and sleeps
# without ever opening $RELAYLAB_LISTEN (say, it waits on a config file that
# never comes).
#
# Must fail: every scenario with verdict NOT-READY (nothing ever accepts a
# connection on the port; the process is still alive when the grader gives up).
import time

print("relay starting...", flush=True)
while True:
    time.sleep(3600)  # BUG: never binds the port
