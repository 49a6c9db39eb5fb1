# relay_shutdown_wait_forever: a relay whose SIGTERM handler waits for every
# call in flight, however long it takes.
#
# Mistake: the grace is a day ("let every call finish"), far beyond any
# orchestrator's kill timeout. New calls are refused correctly and short
# calls finish, but one stuck call (or a long one) holds the exit until
# SIGKILL arrives, which then cuts it anyway, without the clean cancel the
# grace would have sent. It must fail the shutdown exercise's grace scenario.
from relay_shutdown_good import drain_on_sigterm, main

if __name__ == "__main__":
    main(install=lambda server: drain_on_sigterm(server, grace_s=24 * 3600.0))  # BUG: no bound
