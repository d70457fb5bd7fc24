import assert from 'node:assert/strict';
import { safeName } from '../../src/php/safe-names.js';

describe('JSON parser safe names', () => {
  const cases: Array<[string, string]> = [
    ['user/{user-id}', 'user_user-id'],
    ['users-2.members.items', 'users-2_members_items'],
    ['this/is a {weird} dataType.with.dots__and__underscores', 'this_is_a_weird_dataType_with_dots_and_underscores'],
    ['a-very-long-data-type-name-that-goes-on-and-on-and-on-beyond-sixty-four', 'ec971ea10d252c76aef07b3f3074f850'],
    [
      'a-very-long-data-type-name-that-goes-on-and-on-and-on-beyond-sixty-four.tags_with_long_name',
      'avldtntgoaoaobsf_tags_with_long_name',
    ],
    [
      '[].very_long_property_name_that_is_more_than_sixty_four_characters_long_yes',
      'name_that_is_more_than_sixty_four_characters_long_yes',
    ],
    ['[].Another-Long-Name-With-Dashes-To-Test-The-Acronym-Creation-Logic-Here', '584244955be249af9653d70d5f413491'],
    [
      '[].nested.deeply.nested.object.with.a.very.long.path.that.exceeds.limit',
      'deeply_nested_object_with_a_very_long_path_that_exceeds_limit',
    ],
    [
      '[].data.modules.#DistributionGroups.outputs.groupCharacteristics.persistent',
      'DistributionGroups_outputs_groupCharacteristics_persistent',
    ],
    ['[]._id', 'id'],
    ['[].@attributes.date', 'attributes_date'],
    ['ú', ''],
  ];
  for (const [input, expected] of cases) {
    it(`${input} -> ${expected}`, () => assert.equal(safeName(input), expected));
  }
});
