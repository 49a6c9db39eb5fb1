/* judge: the rules more than one exercise uses; see judge.h. */
#include "judge.h"

#include <stdio.h>

int gr_judge_no_deadline_expired_feedback(int64_t after_ms, size_t nlookup, size_t nwork, char *buf, size_t len)
{
    const char *hop = nlookup == 0 ? "Lookup" : "Work";
    return snprintf(buf, len,
                    "with no deadline from the client, Process failed with DEADLINE_EXCEEDED after %lld ms and the "
                    "relay never reached %s (the baseline saw %zu Lookup and %zu Work calls): a call without a "
                    "deadline cannot expire, so the relay gave its downstream call a timeout that cannot work. It "
                    "probably passed the time left straight on as a timeout (grpcio's time_remaining() is None or "
                    "about 9.2e18 s when there is no deadline, far beyond what a timeout can hold); when the caller "
                    "set no deadline, call downstream with no deadline either",
                    (long long)after_ms, hop, nlookup, nwork);
}
