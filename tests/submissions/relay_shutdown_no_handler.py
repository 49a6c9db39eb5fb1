# relay_shutdown_no_handler: a correct relay with no SIGTERM handler at all.
#
# Mistake: SIGTERM keeps its default action, so the process dies the moment
# the orchestrator asks it to stop: every call in flight fails UNAVAILABLE
# (the connection is gone), and the baseline sees their Work cancelled. It
# must fail the shutdown exercise ("killed by SIGTERM").
from relay_shutdown_good import main

if __name__ == "__main__":
    main(install=None)  # BUG: nothing handles SIGTERM
