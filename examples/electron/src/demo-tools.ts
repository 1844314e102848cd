/**
 * What the demo model's five tools (models/weft-demo/tools.json) do, run in the
 * main process. Results are shaped like those the model learnt from.
 */
import type { ToolImplementation } from './generation-service.js';

const round2 = (x: number): number => Math.round(x * 100) / 100;

export const demoToolImplementations: Record<string, ToolImplementation> = {
  calculator: ({ operation, a, b }) => {
    const [x, y] = [Number(a), Number(b)];
    const results: Record<string, number> = { add: x + y, subtract: x - y, multiply: x * y, divide: x / y };
    return { result: round2(results[String(operation)] ?? NaN) };
  },
  convert_units: ({ value, from_unit, to_unit }) => {
    const v = Number(value);
    if (from_unit === 'kilometers' && to_unit === 'miles') return { value: round2(v * 0.621371), unit: to_unit };
    if (from_unit === 'miles' && to_unit === 'kilometers') return { value: round2(v * 1.609344), unit: to_unit };
    if (from_unit === 'celsius' && to_unit === 'fahrenheit') return { value: round2((v * 9) / 5 + 32), unit: to_unit };
    return { error: `cannot convert ${String(from_unit)} to ${String(to_unit)}` };
  },
  get_weather: ({ city, unit = 'celsius' }) => {
    const name = String(city);
    const h = [...name].reduce((sum, ch, i) => sum + (i + 1) * ch.charCodeAt(0), 0);
    const celsius = (h % 35) - 5;
    const temperature = unit === 'fahrenheit' ? round2((celsius * 9) / 5 + 32) : celsius;
    return { city: name, temperature, unit, condition: ['sunny', 'cloudy', 'rainy', 'windy', 'snowy'][h % 5] };
  },
  create_event: ({ title, date }) => ({ status: 'created', title, date }),
  send_email: ({ to }) => ({ status: 'sent', to }),
};
