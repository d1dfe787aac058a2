set terminal svg size 960,600 dynamic
set output 'ratio_skew.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd 'results/data'
set title 'FAST simulated time / LP lower bound vs skew (4x8, 128 MiB per GPU)'
set xlabel 'Zipf skew'
set ylabel 'time / LP bound'
set yrange [0.95:*]
plot 'ratio_skew_h200.dat' using 1:2 with linespoints lw 2 title 'h200', 'ratio_skew_mi300x-100g.dat' using 1:2 with linespoints lw 2 title 'mi300x-100g', 1 with lines dt 2 lc rgb 'black' title 'bound'
