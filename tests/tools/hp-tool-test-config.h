/* hp-tool-test-config.h: a configuration type in a library of its own,
 * for the --require option of hp-config
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <hp-protocols/hp-protocols.h>

G_BEGIN_DECLS

#define HP_TOOL_TEST_TYPE_CONFIG (hp_tool_test_config_get_type ())

G_DECLARE_FINAL_TYPE (HpToolTestConfig, hp_tool_test_config, HP_TOOL_TEST, CONFIG, HpConfig)

HpToolTestConfig *hp_tool_test_config_new (void);

G_END_DECLS
