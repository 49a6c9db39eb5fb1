/* timed: Lookup and Work, one state machine. Both spend time in steps (Lookup
 * one step of delay_ms, Work |steps| of |step_ms|) and stop the moment the
 * call is cancelled or its deadline passes; they differ only in how the
 * request names the plan and how the reply looks, which a timed_kind says. */
#ifndef BL_TIMED_H
#define BL_TIMED_H

#include "rl_unary.h"

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

/* Upper bounds on one call's plan; beyond them, INVALID_ARGUMENT. */
#define BL_MAX_STEPS    1000000u
#define BL_MAX_STEP_MS  600000u
#define BL_MAX_TOTAL_MS 3600000u /* an hour */

typedef struct timed_kind {
    const char *method; /* recorded name, "Lookup" */
    const ProtobufCMessageDescriptor *request;
    /* Reads |req|'s tag and plan. */
    void (*plan)(const ProtobufCMessage *req, const char **tag, uint32_t *steps, uint32_t *step_ms);
    /* Sends the OK reply. */
    void (*reply)(rl_unary *u, const char *tag, uint32_t steps_done);
} timed_kind;

extern const timed_kind bl_lookup_kind;
extern const timed_kind bl_work_kind;

#endif
